import type Docker from "dockerode";
import { runExec } from "./exec.js";

/** The HTTP status of a daemon error, if it has one. */
export function statusCode(error: unknown): number | undefined {
  const code = (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === "number" ? code : undefined;
}

/** The container's uname fields, named as Python's `platform.uname()` names them; empty when uname is missing. */
export async function containerPlatform(
  container: Docker.Container,
  shell: string[],
): Promise<Record<string, string>> {
  const output = await runExec(container, {
    argv: [...shell, "uname -s && uname -n && uname -r && uname -v && uname -m"],
    env: [],
    workdir: "/",
    timeoutSeconds: 10,
    maxOutputBytes: 4096,
  }).catch(() => undefined);
  const lines = output?.returncode === 0 ? output.output.split("\n") : [];
  if (lines.length < 5) return {};
  const [system = "", node = "", release = "", version = "", machine = ""] = lines;
  return { system, node, release, version, machine };
}

/** Whether the container has a /bin/sh (a file, or a link to one), by the daemon's stat of the path. */
export async function hasBinSh(container: Docker.Container): Promise<boolean> {
  try {
    await container.infoArchive({ path: "/bin/sh" });
    return true;
  } catch (error) {
    if (statusCode(error) === 404) return false;
    throw error;
  }
}

/** Force-removes a container; one already gone, or being removed by AutoRemove, counts as removed. */
export async function removeContainer(container: Docker.Container): Promise<void> {
  try {
    await container.remove({ force: true });
  } catch (error) {
    const code = statusCode(error);
    if (code === 404) return;
    if (code === 409) {
      await container.wait({ condition: "removed" }).catch(() => {});
      return;
    }
    throw error;
  }
}
