import type Docker from "dockerode";

/** Seconds of a `sleep` duration (`2h`, `90m`, `1.5d`, `7200`), as the container's PID 1 sleeps it. */
export function sleepSeconds(duration: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(duration.trim());
  if (!match) return undefined;
  const unit = { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "" | "s" | "m" | "h" | "d"];
  return Number(match[1]) * unit;
}

function duration(seconds: number): string {
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/**
 * Why a run's container is gone or stopped, for the error that ends the run: its `container_timeout` passed
 * (it ran that long since swerun started it), or something outside swerun stopped, killed or removed it
 * earlier (`docker kill`, `docker rm -f`, the daemon's OOM killer: said when the container is still there).
 */
export async function goneReason(
  container: Docker.Container,
  startedAtMs: number,
  containerTimeout: string,
): Promise<string> {
  const ran = (Date.now() - startedAtMs) / 1000;
  const limit = sleepSeconds(containerTimeout);
  if (limit !== undefined && ran >= limit)
    return `its container_timeout (${containerTimeout}) has passed: it ran ${duration(ran)}`;
  const state = await container
    .inspect()
    .then((info) => info.State)
    .catch(() => undefined);
  const how = !state
    ? "removed"
    : state.OOMKilled
      ? "killed for lack of memory (OOM)"
      : `stopped (exit code ${state.ExitCode})`;
  return `${how} from outside swerun after ${duration(ran)}, before its container_timeout (${containerTimeout})`;
}
