import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerEnvironment } from "../../../src/environments/docker/environment.js";
import {
  containerProcesses,
  describeDocker,
  dockerFixture,
  dockerTestConfig,
  TEST_RUN_ARGS,
} from "../../helpers/docker.js";
import type { TestImages } from "../../helpers/docker-images.js";

const RUN_ID = `docker-pids-test-${process.pid}`;
/**
 * Fills the container's pids limit with processes swerun cannot find to kill (`env -i` clears the action's
 * marker) for 30 s: the action's timeout cannot end them, and the next action starts while the container has
 * no process to spare, however fast the machine (the kill attempts end about 8 s after the action starts).
 */
const FORK_BOMB = "for i in $(seq 200); do env -i sleep 30 & done; echo never";

await describeDocker("DockerEnvironment in a container out of PIDs (real daemon, --pids-limit)", () => {
  let docker: Docker;
  let images: TestImages;

  beforeAll(async () => {
    ({ docker, images } = await dockerFixture());
  });

  describe.each(["session", "exec"] as const)("exec_mode: %s", (execMode) => {
    let env: DockerEnvironment | undefined;

    afterAll(async () => {
      await env?.close();
    });

    it("reports the fork failure as the action's output; the next action waits for the container to have processes again, and runs", async () => {
      env = await DockerEnvironment.create(
        dockerTestConfig(images.base, {
          exec_mode: execMode,
          run_args: [...TEST_RUN_ARGS, "--pids-limit", "24"],
        }),
        { runId: RUN_ID },
      );
      const limit = await env.execute({
        command: "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max",
      });
      expect(limit.output).toBe("24\n");
      // bash retries a failed fork for about 15 s; the timeout ends the action first.
      const bomb = await env.execute({ command: FORK_BOMB }, { timeout: 3 });
      expect(bomb.returncode).toBe(-1);
      expect(bomb.output).toMatch(/^(bash: fork: retry: Resource temporarily unavailable\n)+/);
      expect(bomb.exception_info).toMatch(/timed out after 3 seconds/);
      // The next action waits, within its timeout, until the container can start a process again (the sleeps
      // end after 30 s, however loaded the machine): the runtime's refusals meanwhile ("OCI runtime exec failed:
      // ... read init-p: connection reset by peer", exit code 126) or the session's fork failures are tried
      // again, not returned.
      const next = await env.execute({ command: "echo alive" }, { timeout: 150 });
      expect(next).toMatchObject({ output: "alive\n", returncode: 0, exception_info: "" });
    }, 300_000);
  });

  /**
   * The shell loop (no perl in the image): four processes, the loop, its lifetime timer and the timer's sleep,
   * start it; an action needs more. The Perl loop is one process: a first action leaves a filler in a session
   * of its own and without the marker (no kill of swerun's reaches it) that takes every process the container
   * has left, retrying its forks as bash does.
   */
  const cannotFork = [
    ["shell", 4, undefined],
    ["Perl", 6, "setsid env -i bash -c 'while :; do sleep 300 & done' >/dev/null 2>&1 & echo started"],
  ] as const;

  it.each(cannotFork)(
    "keeps the %s loop's session when the loop itself cannot fork, and reports it as the action's output",
    async (loop, limit, filler) => {
      const lines: string[] = [];
      const env = await DockerEnvironment.create(
        dockerTestConfig(loop === "shell" ? images.noPerl : images.base, {
          run_args: [...TEST_RUN_ARGS, "--pids-limit", String(limit)],
        }),
        { runId: RUN_ID, onProgress: (line) => lines.push(line) },
      );
      try {
        expect(lines).toEqual([]);
        expect(env.serialize().environment.exec_mode).toBe("session");
        if (filler) {
          expect((await env.execute({ command: filler })).output).toBe("started\n");
          // Until the filler holds every process the container may have (the daemon counts, from outside).
          const container = docker.getContainer(env.containerId);
          for (let wait = 0; wait < 300; wait++) {
            if ((await containerProcesses(container)).length >= limit) break;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
        // Each action is tried until its timeout (1 s here), then says why it could not run.
        for (let step = 0; step < 3; step++) {
          const result = await env.execute({ command: "echo never" }, { timeout: 1 });
          expect(result).toMatchObject({
            output: "swerun: cannot fork: the container's shell session could not start the command\n",
            returncode: -1,
          });
          expect(result.exception_info).toMatch(
            /could not fork to start it \(is the container out of processes/,
          );
        }
      } finally {
        await env.close();
      }
    },
  );
});
