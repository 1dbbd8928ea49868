import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DockerEnvironment } from "../../../src/environments/docker/environment.js";
import { sessionCommand } from "../../../src/environments/docker/session.js";
import { LocalEnvironment } from "../../../src/environments/local.js";
import { describeDocker, dockerFixture, dockerTestConfig, swerunContainers } from "../../helpers/docker.js";

const RUN_ID = `docker-test-${process.pid}`;
const EXEC_MODES = ["session", "exec"] as const;

/** Command lines of the live (non-zombie) processes in the container, read from /proc by another exec. */
async function liveProcesses(env: DockerEnvironment): Promise<string[]> {
  const listing = await env.execute({
    command: `for p in /proc/[0-9]*; do
      state=$(sed 's/^.*) //' "$p/stat" 2>/dev/null | cut -c1)
      [ -n "$state" ] && [ "$state" != Z ] && echo "$(tr '\\0' ' ' < "$p/cmdline" 2>/dev/null)"
    done; true`,
  });
  expect(listing.returncode).toBe(0);
  return listing.output.split("\n").filter(Boolean);
}

await describeDocker("DockerEnvironment (real daemon, real containers)", () => {
  let docker: Docker;
  let images: { base: string; swebench: string };

  beforeAll(async () => {
    ({ docker, images } = await dockerFixture());
  });

  describe.each(EXEC_MODES)("exec_mode: %s", (execMode) => {
    let env: DockerEnvironment;

    beforeAll(async () => {
      process.env.SWERUN_TEST_FORWARDED = "forwarded-value";
      process.env.SWERUN_TEST_SHARED = "host-value";
      process.env.SWERUN_TEST_HOST_VAR = "expanded";
      env = await DockerEnvironment.create(
        dockerTestConfig(images.base, {
          exec_mode: execMode,
          env: {
            FROM_ENV: "env-value",
            SWERUN_TEST_SHARED: "env-wins",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: shell-style variables, expanded from the host environment
            WITH_VAR: "$SWERUN_TEST_HOST_VAR-${SWERUN_TEST_HOST_VAR}",
          },
          forward_env: ["SWERUN_TEST_FORWARDED", "SWERUN_TEST_SHARED", "SWERUN_TEST_NOT_SET"],
          timeout: 20,
          max_output_bytes: 100_000,
        }),
        { runId: RUN_ID, instanceId: "shared-instance" },
      );
    });

    afterAll(async () => {
      await env?.close();
    });

    it("returns each command's output and exit code", async () => {
      expect(await env.execute({ command: "echo hello" })).toMatchObject({
        output: "hello\n",
        returncode: 0,
        exception_info: "",
      });
      expect(await env.execute({ command: "echo partial; exit 3" })).toMatchObject({
        output: "partial\n",
        returncode: 3,
      });
      const missing = await env.execute({ command: "no-such-command-swerun" });
      expect(missing.returncode).toBe(127);
      expect(missing.output).toMatch(/no-such-command-swerun: command not found/);
    });

    it("merges stdout and stderr in the order they were written", async () => {
      const result = await env.execute({
        command: "for i in $(seq 1 300); do echo out$i; echo err$i >&2; done; printf tail >&2",
      });
      const expected = Array.from({ length: 300 }, (_, i) => `out${i + 1}\nerr${i + 1}\n`).join("");
      expect(result.output).toBe(`${expected}tail`);
    });

    it("runs in / by default and in the cwd given for one action", async () => {
      expect((await env.execute({ command: "pwd" })).output).toBe("/\n");
      expect((await env.execute({ command: "pwd" }, { cwd: "/tmp" })).output).toBe("/tmp\n");
    });

    it("sets env, forwards forward_env from the host when set, and lets env win", async () => {
      const result = await env.execute({
        command:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax
          'echo "$FROM_ENV|$SWERUN_TEST_FORWARDED|$SWERUN_TEST_SHARED|$WITH_VAR|${SWERUN_TEST_NOT_SET-unset}"; [ "$SWERUN_TEST_FORWARDED" = forwarded-value ] && echo forwarded',
      });
      // A forwarded host value is a secret: it reaches the command, and its output comes back redacted.
      expect(result.output).toBe("env-value|[REDACTED]|env-wins|expanded-expanded|unset\nforwarded\n");
    });

    it("kills the timed-out command and every process it started, returning -1 and the partial output", async () => {
      // The detector works: a background process of a command that finished normally is still listed.
      await env.execute({ command: "sleep 310 >/dev/null 2>&1 &" });
      expect((await liveProcesses(env)).some((line) => line.startsWith("sleep 310"))).toBe(true);
      await env.execute({
        command:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax
          "kill $(for p in /proc/[0-9]*; do grep -q '^sleep.310' $p/cmdline 2>/dev/null && echo ${p#/proc/}; done)",
      });

      const started = Date.now();
      const result = await env.execute(
        {
          command:
            "echo started; sleep 300 & setsid sleep 301 & (sleep 302 &); echo still-going >&2; sleep 303; echo never",
        },
        { timeout: 1 },
      );
      expect(Date.now() - started).toBeLessThan(6_000);
      expect(result.returncode).toBe(-1);
      expect(result.output).toBe("started\nstill-going\n");
      expect(result.exception_info).toMatch(/timed out after 1 seconds/);
      expect(result.extra?.exception_type).toBe("TimeoutError");
      const survivors = (await liveProcesses(env)).filter((line) => /sleep 30[0-3]|echo never/.test(line));
      expect(survivors).toEqual([]);
    });

    it("ends a timed-out action whose output a process without the action's marker holds", async () => {
      // `env -i` clears the environment, marker included: the kill by marker cannot find that process.
      const result = await env.execute(
        { command: "env -i /bin/sleep 305 & echo started; sleep 306" },
        { timeout: 1 },
      );
      expect(result).toMatchObject({ returncode: -1, output: "started\n" });
      expect(result.exception_info).toMatch(/timed out after 1 seconds/);
      expect(await env.execute({ command: "echo next" })).toMatchObject({ output: "next\n", returncode: 0 });
      expect((await liveProcesses(env)).filter((line) => line.includes("sleep 306"))).toEqual([]);
      await env.execute({
        command:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax
          "for p in /proc/[0-9]*; do grep -q '^/bin/sleep.305' $p/cmdline 2>/dev/null && kill ${p#/proc/}; done",
      });
    });

    it("kills the command when the step is aborted", async () => {
      const abort = new AbortController();
      const running = env.execute({ command: "echo begun; sleep 304" }, { signal: abort.signal });
      setTimeout(() => abort.abort(), 300);
      const result = await running;
      expect(result).toMatchObject({ returncode: -1, output: "begun\n" });
      expect(result.exception_info).toMatch(/interrupted/);
      expect((await liveProcesses(env)).filter((line) => line.includes("sleep 304"))).toEqual([]);
    });

    it("caps huge output and decodes non-UTF-8 bytes exactly like the local environment", async () => {
      const local = new LocalEnvironment({
        environment_class: "local",
        cwd: "",
        env: {},
        timeout: 20,
        max_output_bytes: 100_000,
      });
      for (const command of [
        "head -c 3000000 /dev/zero | tr '\\0' a; echo; echo end",
        "printf 'caf\\351 \\377\\376 ok\\n'; printf '\\342\\202' >&2; echo",
      ]) {
        const inDocker = await env.execute({ command });
        const onHost = await local.execute({ command });
        expect(inDocker.output).toBe(onHost.output);
        expect(inDocker.extra?.truncated).toEqual(onHost.extra?.truncated);
      }
      const huge = await env.execute({ command: "head -c 3000000 /dev/zero | tr '\\0' a" });
      expect(huge.extra?.truncated).toEqual({ total_bytes: 3_000_000, elided_bytes: 2_900_000 });
      expect(huge.output.length).toBeLessThan(100_200);
      expect((await env.execute({ command: "printf 'caf\\351\\n'" })).output).toBe("caf\uFFFD\n");
    });

    it("names its container swerun-..., labels it with the run and instance, and turns networking off", async () => {
      const info = await docker.getContainer(env.containerId).inspect();
      expect(info.Name).toMatch(/^\/swerun-shared-instance-[0-9a-f]{8}$/);
      expect(info.Config.Labels).toMatchObject({
        "swerun.run_id": RUN_ID,
        "swerun.instance_id": "shared-instance",
      });
      expect(info.HostConfig.NetworkMode).toBe("none");
      expect(info.Config.Cmd).toEqual(
        execMode === "session" ? sessionCommand(["bash", "-lc"]) : ["sleep", "2h"],
      );
      expect((await env.execute({ command: "ls /sys/class/net" })).output).toBe("lo\n");
    });

    it("serializes its config with forward_env names but never their host values", () => {
      const serialized = env.serialize();
      expect(serialized.environment_type).toBe("minisweagent.environments.docker.DockerEnvironment");
      expect(serialized.environment).toMatchObject({
        image: images.base,
        cwd: "/",
        interpreter: ["bash", "-lc"],
      });
      expect(serialized.environment.forward_env).toContain("SWERUN_TEST_FORWARDED");
      expect(JSON.stringify(serialized)).not.toContain("forwarded-value");
      expect(JSON.stringify(env.templateVars())).not.toContain("forwarded-value");
      expect(env.templateVars()).toMatchObject({ image: images.base, timeout: 20 });
    });
  });

  it("runs in the configured cwd, passes container_options, and removes its container on close", async () => {
    const other = await DockerEnvironment.create(
      dockerTestConfig(images.swebench, { cwd: "/testbed", container_options: { Hostname: "swerun-box" } }),
      { runId: RUN_ID, instanceId: "calc-1" },
    );
    expect((await other.execute({ command: "pwd; cat /etc/hostname; ./test.sh" })).output).toBe(
      "/testbed\nswerun-box\nok   add 2 3 = 5\nFAIL sub 5 3: expected 2, got 8\nok   mul 4 3 = 12\n",
    );
    await other.close();
    await other.close();
    expect((await swerunContainers(docker, RUN_ID)).map((c) => c.Id)).not.toContain(other.containerId);
    await expect(other.execute({ command: "true" })).rejects.toThrow(/already removed/);
  });

  it("keeps the container with keep_container and says how to enter it", async () => {
    const lines: string[] = [];
    const kept = await DockerEnvironment.create(dockerTestConfig(images.base, { keep_container: true }), {
      runId: RUN_ID,
      onProgress: (line) => lines.push(line),
    });
    await kept.close();
    try {
      expect(lines.join("\n")).toContain(`docker exec -it ${kept.containerName} bash`);
      const info = await docker.getContainer(kept.containerId).inspect();
      expect(info.State.Running).toBe(true);
      expect(info.Config.Labels["swerun.keep"]).toBe("true");
    } finally {
      await docker.getContainer(kept.containerId).remove({ force: true });
    }
  });

  it("fails with a clear error naming a missing image that cannot be pulled, leaving no container", async () => {
    const image = "localhost:1/swerun-missing:never";
    const before = (await swerunContainers(docker, RUN_ID)).length;
    const error = await DockerEnvironment.create(dockerTestConfig(image, { pull_timeout: 20 }), {
      runId: RUN_ID,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toBe("DockerImageError");
    expect((error as Error).message).toMatch(
      /^Docker image "localhost:1\/swerun-missing:never" is not on the daemon and could not be pulled: /,
    );
    expect((error as Error).message).not.toContain("\n");
    expect((await swerunContainers(docker, RUN_ID)).length).toBe(before);
  });

  it.each(EXEC_MODES)(
    "exec_mode %s: a container removed or killed from outside is said so, not taken for its container_timeout",
    async (execMode) => {
      const removed = await DockerEnvironment.create(dockerTestConfig(images.base, { exec_mode: execMode }), {
        runId: RUN_ID,
      });
      await docker.getContainer(removed.containerId).remove({ force: true });
      await expect(removed.execute({ command: "true" })).rejects.toThrow(
        new RegExp(
          `^Docker container ${removed.containerName} is gone or stopped \\(.+\\): removed from outside swerun after \\d+ s, before its container_timeout \\(2h\\)$`,
        ),
      );
      await removed.close();
      // Without --rm the stopped container stays, and says how it ended.
      const killed = await DockerEnvironment.create(
        dockerTestConfig(images.base, { exec_mode: execMode, run_args: ["--network", "none"] }),
        { runId: RUN_ID },
      );
      await docker.getContainer(killed.containerId).kill();
      await docker.getContainer(killed.containerId).wait();
      const error = await killed.execute({ command: "true" }).then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
      expect(error?.message).toMatch(
        /: stopped \(exit code 137\) from outside swerun after \d+ s, before its container_timeout \(2h\)$/,
      );
      expect(error?.message).not.toContain("has passed");
      await killed.close();
    },
  );
});
