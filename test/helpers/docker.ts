import { openSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { describe, it } from "vitest";
import { dockerEnvironmentSchema } from "../../src/config/docker.js";
import type { DockerEnvironmentConfig } from "../../src/config/schema.js";
import { connectDocker, resolveDockerEndpoint } from "../../src/environments/docker/client.js";
import { CONTAINER_LABELS } from "../../src/environments/docker/container-labels.js";
import { ensureTestImages, type TestImages } from "./docker-images.js";

/** With SWERUN_REQUIRE_DOCKER=1 (CI), a missing daemon fails the Docker tests instead of skipping them. */
export const REQUIRE_DOCKER = process.env.SWERUN_REQUIRE_DOCKER === "1";

let probe: Promise<{ docker?: Docker; reason: string }> | undefined;

/** One client per test process, if a daemon answers; else why not. */
function probeDocker(): Promise<{ docker?: Docker; reason: string }> {
  probe ??= (async () => {
    try {
      return { docker: await connectDocker(resolveDockerEndpoint(), 5_000), reason: "" };
    } catch (error) {
      return { reason: error instanceof Error ? error.message : String(error) };
    }
  })();
  return probe;
}

/** Prints the skip reason once per vitest run, not once per test file (workers share the parent's pid). */
function announceSkip(reason: string): void {
  try {
    openSync(join(tmpdir(), `swerun-docker-skip-${process.ppid}`), "wx");
  } catch {
    return;
  }
  process.stderr.write(
    `Docker tests skipped: no Docker daemon answers (${reason}). Set SWERUN_REQUIRE_DOCKER=1 to make this a failure.\n`,
  );
}

/**
 * `describe` for tests that need a Docker daemon: skipped with one line saying why when none answers,
 * failed instead when SWERUN_REQUIRE_DOCKER=1. Use with top-level await.
 */
export async function describeDocker(name: string, body: () => void): Promise<void> {
  const { docker, reason } = await probeDocker();
  if (docker) {
    describe(name, body);
  } else if (REQUIRE_DOCKER) {
    describe(name, () => {
      it("needs a Docker daemon (SWERUN_REQUIRE_DOCKER=1)", () => {
        throw new Error(`SWERUN_REQUIRE_DOCKER=1 but no Docker daemon answers: ${reason}`);
      });
    });
  } else {
    announceSkip(reason);
    describe.skip(name, body);
  }
}

/** The shared client and the offline test images (built on first use, then cached by content hash). */
export async function dockerFixture(): Promise<{ docker: Docker; images: TestImages }> {
  const { docker, reason } = await probeDocker();
  if (!docker) throw new Error(`no Docker daemon: ${reason}`);
  return { docker, images: await ensureTestImages(docker) };
}

/** The containers carrying swerun's run label (all states), optionally of one run. */
export async function swerunContainers(docker: Docker, runId?: string): Promise<Docker.ContainerInfo[]> {
  const label = runId ? `${CONTAINER_LABELS.runId}=${runId}` : CONTAINER_LABELS.runId;
  return docker.listContainers({ all: true, filters: { label: [label] } });
}

/** Test containers: no network, removed by the daemon when their `sleep` ends. */
export const TEST_RUN_ARGS = ["--rm", "--network", "none"];

/** A validated docker environment config for a test image: TEST_RUN_ARGS, then `extra`. */
export function dockerTestConfig(
  image: string,
  extra: Record<string, unknown> = {},
): DockerEnvironmentConfig {
  return dockerEnvironmentSchema.parse({
    environment_class: "docker",
    image,
    run_args: TEST_RUN_ARGS,
    ...extra,
  });
}

/**
 * Writes a complete config (no built-in base) for a scripted run in a Docker test image: the scripted
 * model returns `outputs` in order; `environment` and `agent` override the defaults. Returns the path.
 */
export function writeDockerRunConfig(
  path: string,
  image: string,
  outputs: Array<Record<string, unknown>>,
  environment: Record<string, unknown> = {},
  agent: Record<string, unknown> = {},
): string {
  writeFileSync(
    path,
    JSON.stringify({
      agent: { system_template: "You fix bugs.", instance_template: "{{task}}", cost_limit: 0, ...agent },
      environment: {
        environment_class: "docker",
        image,
        cwd: "/testbed",
        run_args: TEST_RUN_ARGS,
        ...environment,
      },
      model: {
        // Outputs with tool calls are answered with tool messages, as by mini-swe-agent's scripted tool-call model.
        model_class: outputs.some((output) => Array.isArray(output.tool_calls))
          ? "deterministic_toolcall"
          : "deterministic",
        observation_template:
          "<returncode>{{output.returncode}}</returncode>\n<output>\n{{ output.output -}}\n</output>",
        format_error_template: "format error: {{error}}",
        outputs,
      },
      run: { task: "./test.sh fails: fix calc.sh" },
    }),
  );
  return path;
}

/** The command lines of a container's processes, as the daemon lists them from outside (no exec inside). */
export async function containerProcesses(container: Docker.Container): Promise<string[]> {
  const top = (await container.top()) as { Titles?: string[]; Processes?: string[][] };
  const column = top.Titles?.indexOf("CMD") ?? -1;
  return (top.Processes ?? []).map((row) => (row[column >= 0 ? column : row.length - 1] ?? "").trim());
}
