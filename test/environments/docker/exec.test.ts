import { describe, expect, it } from "vitest";
import { DockerEnvironment } from "../../../src/environments/docker/environment.js";
import { isRuntimeRefusal, whileNoProcess } from "../../../src/environments/docker/exec.js";
import type { ExecOutput } from "../../../src/messages.js";
import { describeDocker, dockerFixture, dockerTestConfig } from "../../helpers/docker.js";

const output = (text: string, returncode: number): ExecOutput => ({
  output: text,
  returncode,
  exception_info: "",
  extra: {},
});

/** What runc said when a container out of processes could not start an exec (issue 33, a slow VM). */
const REFUSED = output(
  "OCI runtime exec failed: exec failed: unable to start container process: read init-p: connection reset by peer: unknown\r\n",
  126,
);
const ALIVE = output("alive\n", 0);

describe("isRuntimeRefusal", () => {
  it("is the runtime's refusal for want of processes, not a command's exit code 126 or a missing cwd", () => {
    expect(isRuntimeRefusal(REFUSED)).toBe(true);
    expect(
      isRuntimeRefusal(
        output("OCI runtime exec failed: ... fork/exec: resource temporarily unavailable", 126),
      ),
    ).toBe(true);
    expect(isRuntimeRefusal(output("bash: ./x: Permission denied\n", 126))).toBe(false);
    expect(isRuntimeRefusal({ ...REFUSED, returncode: 1 })).toBe(false);
    expect(
      isRuntimeRefusal(
        output(
          'OCI runtime exec failed: exec failed: unable to start container process: chdir to cwd ("/gone") set in config.json failed: no such file or directory: unknown',
          126,
        ),
      ),
    ).toBe(false);
  });
});

describe("whileNoProcess", () => {
  it("tries the action again while the container cannot start it, with what is left of its timeout", async () => {
    const left: number[] = [];
    const results = [REFUSED, REFUSED, REFUSED, ALIVE];
    const result = await whileNoProcess(30, undefined, isRuntimeRefusal, async (killAfterMs) => {
      left.push(killAfterMs);
      return results.shift() ?? ALIVE;
    });
    expect(result).toEqual(ALIVE);
    expect(left).toHaveLength(4);
    expect(left[0]).toBeGreaterThan(29_000);
    for (let i = 1; i < left.length; i++) expect(left[i]).toBeLessThan(left[i - 1] ?? 0);
  });

  it("returns the last refusal once the timeout has passed, and at once when aborted or for anything else", async () => {
    let tries = 0;
    const refused = await whileNoProcess(0.3, undefined, isRuntimeRefusal, async () => {
      tries++;
      return REFUSED;
    });
    expect(refused).toEqual(REFUSED);
    expect(tries).toBeGreaterThan(1);
    const abort = new AbortController();
    abort.abort();
    tries = 0;
    await whileNoProcess(30, abort.signal, isRuntimeRefusal, async () => {
      tries++;
      return REFUSED;
    });
    expect(tries).toBe(1);
    const failed = output("exit 3\n", 3);
    expect(await whileNoProcess(30, undefined, isRuntimeRefusal, async () => failed)).toBe(failed);
  });
});

await describeDocker("the runtime's other refusals are said at once (real daemon)", () => {
  it("exec_mode exec: an action in a cwd that does not exist returns the runtime's words, not retried", async () => {
    const { images } = await dockerFixture();
    const env = await DockerEnvironment.create(dockerTestConfig(images.base, { exec_mode: "exec" }), {
      runId: `docker-exec-test-${process.pid}`,
    });
    try {
      const result = await env.execute({ command: "echo never" }, { cwd: "/no/such/folder", timeout: 600 });
      expect(result.returncode).toBe(126);
      expect(result.output).toMatch(/^OCI runtime exec failed: .*no such file or directory/);
      expect(isRuntimeRefusal(result)).toBe(false);
    } finally {
      await env.close();
    }
  }, 60_000);
});
