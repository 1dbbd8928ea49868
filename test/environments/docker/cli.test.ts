import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import { runCli, startCli, waitFor } from "../../helpers/cli.js";
import {
  containerProcesses,
  describeDocker,
  dockerFixture,
  TEST_RUN_ARGS,
  writeDockerRunConfig,
} from "../../helpers/docker.js";
import { completion, TEST_KEY, TEST_PRICES, toolCall, useOpenAIServer } from "../../helpers/openai-server.js";
import { tempDir } from "../../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));
const submit = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff";

/** A scripted run whose model runs `commands` in the container, in order. */
function dockerRunConfig(
  dir: string,
  image: string,
  commands: string[],
  environment: Record<string, unknown> = {},
) {
  const outputs = commands.map((command, index) => ({
    role: "assistant",
    content: `step ${index}`,
    extra: { actions: [{ command }], cost: 0 },
  }));
  return writeDockerRunConfig(join(dir, "docker-run.json"), image, outputs, environment, { step_limit: 20 });
}

await describeDocker("swerun run with environment_class docker (CLI, end to end)", () => {
  let docker: Docker;
  let images: { base: string; noPerl: string; swebench: string };
  const server = useOpenAIServer();

  /** Containers created by the CLI process with this pid (swerun labels each with its creator's pid). */
  const containersOf = (pid: number | undefined) =>
    docker.listContainers({ all: true, filters: { label: [`swerun.pid=${pid}`] } });

  beforeAll(async () => {
    ({ docker, images } = await dockerFixture());
  });

  it("never writes a forwarded host value: a command that prints it is redacted in the trajectory", async () => {
    const dir = tempDir();
    const out = join(dir, "secret.traj.json");
    const secret = "hunter2-forwarded-7d1c";
    const config = dockerRunConfig(
      dir,
      images.base,
      ['echo "token=$SWERUN_TEST_TOKEN"', "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"],
      {
        cwd: "/",
        forward_env: ["SWERUN_TEST_TOKEN"],
      },
    );
    const result = await runCli(["run", "-c", config, "--yolo", "-o", out], {
      env: { SWERUN_TEST_TOKEN: secret },
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const text = readFileSync(out, "utf8");
    expect(text).not.toContain(secret);
    expect(readJson(out).messages[3].extra.raw_output).toBe("token=[REDACTED]\n");
    expect(result.stdout + result.stderr).not.toContain(secret);
  });

  it("fixes the bug of the SWE-bench-shaped image with the scripted model and submits git diff", async () => {
    const dir = tempDir();
    const out = join(dir, "calc.traj.json");
    const config = dockerRunConfig(dir, images.base, [
      "./test.sh",
      "sed -i 's/sub) echo $(( $2 + $3 ))/sub) echo $(( $2 - $3 ))/' calc.sh && ./test.sh",
      submit,
    ]);
    const run = startCli([
      "run",
      "-c",
      config,
      "--environment-class",
      "docker",
      "-c",
      `environment.image=${images.swebench}`,
      "--yolo",
      "-o",
      out,
    ]);
    const result = await run.done;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/exit status: Submitted/);
    const trajectory = readJson(out);
    expect(trajectory.info.exit_status).toBe("Submitted");
    expect(trajectory.info.config.environment_type).toBe(
      "minisweagent.environments.docker.DockerEnvironment",
    );
    expect(trajectory.info.config.environment.image).toBe(images.swebench);
    const observations = trajectory.messages
      .filter((message: { role: string }) => message.role === "user")
      .slice(1);
    expect(observations[0].content).toMatch(
      /<returncode>1<\/returncode>[\s\S]*FAIL sub 5 3: expected 2, got 8/,
    );
    expect(observations[1].content).toMatch(/<returncode>0<\/returncode>[\s\S]*ok {3}sub 5 3 = 2/);
    expect(trajectory.info.submission.split("\n")).toEqual([
      "diff --git a/calc.sh b/calc.sh",
      expect.any(String),
      "--- a/calc.sh",
      "+++ b/calc.sh",
      "@@ -2,7 +2,7 @@",
      " # calc.sh OP A B: prints the result of A OP B for OP in add, sub, mul.",
      ' case "$1" in',
      "   add) echo $(( $2 + $3 )) ;;",
      "-  sub) echo $(( $2 + $3 )) ;;",
      "+  sub) echo $(( $2 - $3 )) ;;",
      "   mul) echo $(( $2 * $3 )) ;;",
      '   *) echo "unknown operation: $1" >&2; exit 2 ;;',
      " esac",
      "",
    ]);
    expect(await containersOf(run.child.pid)).toEqual([]);
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`removes the container when the CLI gets ${signal} mid-command`, async () => {
      const dir = tempDir();
      const out = join(dir, "signal.traj.json");
      const config = dockerRunConfig(dir, images.base, ["sleep 30", submit], { cwd: "/", timeout: 60 });
      const run = startCli(["run", "-c", config, "--yolo", "-o", out]);
      await waitFor(() => run.output().includes("$ sleep 30"), 20_000, run.child);
      expect(await containersOf(run.child.pid)).toHaveLength(1);
      run.child.kill(signal);
      const result = await run.done;
      expect(result.stderr).toBe("");
      expect(await containersOf(run.child.pid)).toEqual([]);
      expect(readJson(out).messages.at(-2).extra).toMatchObject({ returncode: -1 });
    });
  }

  it("removes the container when the run ends in an error", async () => {
    const dir = tempDir();
    const out = join(dir, "error.traj.json");
    const config = dockerRunConfig(dir, images.base, ["echo one step and then the script runs out"], {
      cwd: "/",
    });
    const run = startCli(["run", "-c", config, "--yolo", "-o", out]);
    const result = await run.done;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/deterministic model: the script has 1 outputs/);
    expect(readJson(out).info.exit_status).toBe("ScriptExhausted");
    expect(await containersOf(run.child.pid)).toEqual([]);
  });

  it("a run killed between actions leaves no container: the session's stdin closes and it ends", async () => {
    const dir = tempDir();
    const registry = join(dir, "prices.json");
    writeFileSync(registry, JSON.stringify(TEST_PRICES));
    server.push(
      { body: completion({ toolCalls: [toolCall("call_0", { command: "echo started" })] }) },
      { stall: true },
    );
    const run = startCli(
      [
        "run",
        "-m",
        "openai/test-model",
        "-c",
        `model.model_kwargs.api_base=${server.url}`,
        "--environment-class",
        "docker",
        "-c",
        `environment.image=${images.base}`,
        "-c",
        `environment.run_args=${JSON.stringify(TEST_RUN_ARGS)}`,
        "-t",
        "t",
        "--yolo",
        "-o",
        join(dir, "killed.traj.json"),
      ],
      { cwd: dir, env: { OPENAI_API_KEY: TEST_KEY, LITELLM_MODEL_REGISTRY_PATH: registry } },
    );
    await waitFor(() => server.requests.length === 2, 20_000, run.child);
    expect((await containersOf(run.child.pid)).length).toBe(1);
    run.child.kill("SIGKILL");
    await run.done;
    const deadline = Date.now() + 10_000;
    while ((await containersOf(run.child.pid)).length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await containersOf(run.child.pid)).toEqual([]);
  });

  /** Starts a run whose first action is `sleep 30` and SIGKILLs it once that runs in the container. */
  async function killedDuringAction(image: string) {
    const dir = tempDir();
    const config = dockerRunConfig(dir, image, ["sleep 30", submit], { cwd: "/", timeout: 60 });
    const run = startCli(["run", "-c", config, "--yolo", "-o", join(dir, "killed.traj.json")]);
    await waitFor(() => run.output().includes("$ sleep 30"), 20_000, run.child);
    // Killed once the action runs in the container: killed before the session has read it, the session sees
    // its input end and the container goes by itself (--rm), leaving nothing to clean up.
    const [running] = await containersOf(run.child.pid);
    const container = docker.getContainer(running?.Id ?? "");
    const sleeping = async () => (await containerProcesses(container)).includes("sleep 30");
    const deadline = Date.now() + 20_000;
    while (!(await sleeping())) {
      if (Date.now() > deadline) throw new Error("the action did not start in the container within 20 s");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    run.child.kill("SIGKILL");
    await run.done;
    return run.child.pid;
  }

  it("ends the container of a run killed during an action at once where the Perl loop runs it (the action killed)", async () => {
    const pid = await killedDuringAction(images.base);
    const deadline = Date.now() + 10_000;
    while ((await containersOf(pid)).length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await containersOf(pid)).toEqual([]);
  });

  it("leaves the container of a run killed during an action of the shell loop for swerun cleanup, which removes and lists it", async () => {
    const pid = await killedDuringAction(images.noPerl);
    const [leftover] = await containersOf(pid);
    expect(leftover).toBeDefined();
    const runId = leftover?.Labels["swerun.run_id"] ?? "";
    const cleanup = await runCli(["cleanup", "--run-id", runId]);
    expect(cleanup.code).toBe(0);
    // The force-remove kills the container, whose --rm may then race it to the removal (Docker's 409).
    expect(cleanup.stdout).toMatch(
      new RegExp(
        `^removed ${leftover?.Names[0]?.slice(1)}  id ${leftover?.Id.slice(0, 12)}  run ${runId}  instance -  age \\d+s  \\(running\\)( \\(it was already going away\\))?\\n1 removed, 0 failed\\.\\n$`,
      ),
    );
    expect(await containersOf(pid)).toEqual([]);
  });
});
