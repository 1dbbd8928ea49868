import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ensureCondaImage, TESTBED_ONLY_MODULE, TESTBED_PREFIX } from "../helpers/conda-images.js";
import { describeDocker, dockerFixture } from "../helpers/docker.js";
import { completion, TEST_KEY, TEST_PRICES, toolCall, useOpenAIServer } from "../helpers/openai-server.js";
import { tempDir } from "../helpers/tmp.js";

const server = useOpenAIServer();
const PROBE = `echo "env=$CONDA_DEFAULT_ENV"; python -c 'import sys, ${TESTBED_ONLY_MODULE}; print(sys.prefix)'`;

/** `swerun swebench` with the built-in config (no config file) on one instance of the conda-layout image. */
async function runDefaultConfig(image: string, extra: string[] = []) {
  const dir = tempDir("swerun-bash-env-");
  const dataset = join(dir, "d.json");
  writeFileSync(
    dataset,
    JSON.stringify([
      { instance_id: "t__calc-1", problem_statement: "sub adds", repo: "t/calc", image_name: image },
    ]),
  );
  const registry = join(dir, "prices.json");
  writeFileSync(registry, JSON.stringify(TEST_PRICES));
  server.push(
    { body: completion({ toolCalls: [toolCall("call_1", { command: PROBE })] }) },
    {
      body: completion({
        toolCalls: [
          toolCall("call_2", { command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff" }),
        ],
      }),
    },
  );
  const out = join(dir, "out");
  const result = await runCli(
    [
      "swebench",
      "--subset",
      dataset,
      "-m",
      "openai/test-model",
      "-c",
      `model.model_kwargs.api_base=${server.url}`,
      "-c",
      'environment.run_args=["--rm","--network","none"]',
      ...extra,
      "-o",
      out,
    ],
    {
      cwd: dir,
      env: { OPENAI_API_KEY: TEST_KEY, SWERUN_GLOBAL_CONFIG_DIR: dir, LITELLM_MODEL_REGISTRY_PATH: registry },
    },
  );
  expect(result.stderr).not.toMatch(/swerun:/);
  expect(result.code).toBe(0);
  const trajectory = JSON.parse(readFileSync(join(out, "t__calc-1", "t__calc-1.traj.json"), "utf8"));
  const observation = trajectory.messages.find((m: { role: string }) => m.role === "tool");
  return { observation, trajectory };
}

await describeDocker("swerun swebench's default config on an image laid out like SWE-bench's", () => {
  let image: string;

  beforeAll(async () => {
    const { docker } = (await dockerFixture()) as { docker: Docker };
    image = await ensureCondaImage(docker);
  }, 120_000);

  it("runs the agent's commands in the testbed env that /root/.bashrc activates (BASH_ENV)", async () => {
    const { observation, trajectory } = await runDefaultConfig(image);
    expect(trajectory.info.config.environment.interpreter).toEqual([
      "env",
      "BASH_ENV=/root/.bashrc",
      "bash",
      "-c",
    ]);
    expect(observation.extra.returncode).toBe(0);
    expect(observation.extra.raw_output).toBe(`env=testbed\n${TESTBED_PREFIX}\n`);
  });

  it("without BASH_ENV the same command gets the base env's python, without the repository's modules", async () => {
    const { observation } = await runDefaultConfig(image, ["-c", 'environment.interpreter=["bash","-c"]']);
    expect(observation.extra.returncode).toBe(1);
    expect(observation.extra.raw_output).toContain(
      `ModuleNotFoundError: No module named '${TESTBED_ONLY_MODULE}'`,
    );
    expect(observation.extra.raw_output).toMatch(/^env=\n/);
  });
});
