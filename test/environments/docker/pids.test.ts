import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerEnvironment } from "../../../src/environments/docker/environment.js";
import type { ExecOutput } from "../../../src/messages.js";
import { describeDocker, dockerFixture, dockerTestConfig, TEST_RUN_ARGS } from "../../helpers/docker.js";

const RUN_ID = `docker-pids-test-${process.pid}`;
const FORK_BOMB = "for i in $(seq 200); do sleep 100 & done; echo never";

await describeDocker("DockerEnvironment in a container out of PIDs (real daemon, --pids-limit)", () => {
  let images: { base: string; swebench: string };

  beforeAll(async () => {
    ({ images } = await dockerFixture());
  });

  describe.each(["session", "exec"] as const)("exec_mode: %s", (execMode) => {
    let env: DockerEnvironment | undefined;

    afterAll(async () => {
      await env?.close();
    });

    it("reports the fork failure as the action's output and runs the next actions", async () => {
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
      // bash retries a failed fork for about 15 s; the timeout ends the action first, while no process
      // can start in the container to kill it.
      const bomb = await env.execute({ command: FORK_BOMB }, { timeout: 3 });
      expect(bomb.returncode).toBe(-1);
      expect(bomb.output).toMatch(/^(bash: fork: retry: Resource temporarily unavailable\n)+/);
      expect(bomb.exception_info).toMatch(/timed out after 3 seconds/);
      // The environment goes on: each action runs, or says why it could not, until the container has
      // processes to spare again (bash gives up and exits).
      const seen: ExecOutput[] = [];
      for (let attempt = 0; attempt < 100; attempt++) {
        const next = await env.execute({ command: "echo alive" }, { timeout: 5 });
        seen.push(next);
        if (next.output === "alive\n") break;
        // In exec mode the daemon's runtime may refuse the exec itself (its own words, e.g. "OCI runtime exec
        // failed: ... runc ..."), which is the same reason said by another part.
        expect(`${next.output} ${next.exception_info}`).toMatch(
          /fork|Resource temporarily unavailable|OCI runtime|runc/i,
        );
      }
      expect(seen.at(-1)).toMatchObject({ output: "alive\n", returncode: 0 });
    }, 120_000);
  });

  it("keeps the session when the loop itself cannot fork, and reports it as the action's output", async () => {
    // Four processes: the loop, its lifetime timer and the timer's sleep start it; an action needs more.
    const lines: string[] = [];
    const env = await DockerEnvironment.create(
      dockerTestConfig(images.base, { run_args: [...TEST_RUN_ARGS, "--pids-limit", "4"] }),
      { runId: RUN_ID, onProgress: (line) => lines.push(line) },
    );
    try {
      expect(lines).toEqual([]);
      expect(env.serialize().environment.exec_mode).toBe("session");
      for (let step = 0; step < 3; step++) {
        const result = await env.execute({ command: "echo never" });
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
  });
});
