import { UserError } from "../errors.js";

/**
 * The image of an instance when its record names none: SWE-bench's prebuilt evaluation images on Docker Hub.
 * A template may use `{instance_id}` (as in the record) and `{id_docker_compatible}` (the id with `__`
 * replaced by `_1776_`, since Docker image names cannot contain a double underscore).
 */
export const DEFAULT_IMAGE_TEMPLATE = "docker.io/swebench/sweb.eval.x86_64.{id_docker_compatible}:latest";

const PLACEHOLDER = /\{([^{}]*)\}/g;
const KNOWN = new Set(["instance_id", "id_docker_compatible"]);

/** Throws a UserError when `template` uses a placeholder other than `{instance_id}` and `{id_docker_compatible}`. */
export function checkImageTemplate(template: string): void {
  for (const match of template.matchAll(PLACEHOLDER)) {
    if (!KNOWN.has(match[1] ?? "")) {
      throw new UserError(
        `image template "${template}": unknown placeholder {${match[1]}} (use {instance_id} or {id_docker_compatible})`,
      );
    }
  }
}

/**
 * The container image for an instance, as mini-swe-agent's `get_swebench_docker_image_name`: the record's
 * `image_name` or `docker_image` when set, then SWE-bench 5's `image` (the image its harness grades in, so
 * the agent works where the instance is graded), else `template` filled in and lowercased.
 */
export function imageName(
  instance: { instance_id: string; [key: string]: unknown },
  template = DEFAULT_IMAGE_TEMPLATE,
): string {
  for (const key of ["image_name", "docker_image", "image"]) {
    const value = instance[key];
    if (typeof value === "string" && value !== "") return value;
  }
  checkImageTemplate(template);
  const values: Record<string, string> = {
    instance_id: instance.instance_id,
    id_docker_compatible: instance.instance_id.replaceAll("__", "_1776_"),
  };
  return template.replace(PLACEHOLDER, (_, name: string) => values[name] ?? "").toLowerCase();
}
