import { createHash } from "node:crypto";
import { modelDisplayName } from "../config/model.js";
import type { SwerunConfig } from "../config/schema.js";
import type { AgentSnapshot } from "../formats/run-json.js";
import { swerunVersion } from "../util/package-root.js";
import { withoutSecrets } from "../util/sanitize.js";

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** JSON with object keys sorted at every level, so equal configs hash equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function agentSnapshot(config: SwerunConfig, imageTemplate: string | null): AgentSnapshot {
  const templates: Record<string, string> = {
    system_template: config.agent.system_template,
    instance_template: config.agent.instance_template,
  };
  const model = config.model as Record<string, unknown>;
  for (const key of ["observation_template", "format_error_template"]) {
    if (typeof model[key] === "string") templates[key] = model[key] as string;
  }
  const environment = config.environment as Record<string, unknown>;
  // Image-based classes: their image template and exec mode say what ran.
  const docker = environment.environment_class === "docker" || environment.environment_class === "kubernetes";
  return {
    name: "swerun",
    version: swerunVersion(),
    model: modelDisplayName(config.model),
    model_class: config.model.model_class,
    template_sha256: Object.fromEntries(Object.entries(templates).map(([key, text]) => [key, sha256(text)])),
    config_sha256: sha256(
      canonical(withoutSecrets({ ...config, model: { ...config.model, outputs: undefined } })),
    ),
    step_limit: config.agent.step_limit,
    cost_limit: config.agent.cost_limit,
    wall_time_limit_seconds: config.agent.wall_time_limit_seconds,
    environment_class: String(environment.environment_class),
    image_template: docker ? imageTemplate : null,
    exec_mode: docker && typeof environment.exec_mode === "string" ? environment.exec_mode : null,
  };
}
