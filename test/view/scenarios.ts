import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/util/package-root.js";
import { runCli } from "../helpers/cli.js";
import { completion, OpenAIServer, TEST_KEY, TEST_PRICES } from "../helpers/openai-server.js";

const DEMO = join(packageRoot(), "config", "swebench-demo");

/** A reply of the model (text-based: the command in a fenced block), as the local OpenAI server returns it. */
const reply = (text: string, command: string | null, promptTokens: number) => ({
  body: completion({
    content: command === null ? text : `${text}\n\n\`\`\`mswea_bash_command\n${command}\n\`\`\``,
    usage: { prompt_tokens: promptTokens, completion_tokens: 30, total_tokens: promptTokens + 30 },
  }),
});

const FIX = "sed -i 's/\\$1 - \\$2/$1 + $2/' calc.sh && bash test.sh";
const SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached";
/** What the page must show as text and never run. */
export const SCRIPT_OUTPUT = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;

/**
 * A real `swerun swebench` batch (local environment, one worker, the text-based model client talking HTTP to
 * the local OpenAI-speaking server) with three instances: `view__fix-1` submits; `view__mixed-2` sends a reply
 * without a command (format error), runs a command that times out and one that prints `SCRIPT_OUTPUT`,
 * fixes the bug and submits; `view__limit-3` runs into the step limit.
 */
export async function recordScriptedBatch(dir: string): Promise<string> {
  cpSync(join(DEMO, "calc"), join(dir, "calc"), { recursive: true });
  const base = { repo: "test/calc", fixture: "calc", image_name: "swerun-demo/calc:latest" };
  const instances = [
    { ...base, instance_id: "view__fix-1", problem_statement: "add subtracts: `add 2 3` prints -1." },
    { ...base, instance_id: "view__mixed-2", problem_statement: "add subtracts; also check slow commands." },
    { ...base, instance_id: "view__limit-3", problem_statement: "Look around forever." },
  ];
  const dataset = join(dir, "dataset.json");
  writeFileSync(dataset, JSON.stringify(instances, null, 2));
  const settings = join(dir, "settings");
  mkdirSync(settings, { recursive: true });
  const registry = join(settings, "prices.json");
  writeFileSync(registry, JSON.stringify(TEST_PRICES));
  const server = await OpenAIServer.start();
  // One worker: the instances ask in dataset order.
  server.push(
    reply("Fix it.", FIX, 800),
    reply("Submit.", SUBMIT, 950),
    reply("I will explain without a command block.", null, 700),
    reply("A slow command.", "sleep 5", 820),
    reply("Print some markup.", `printf '%s\\n' '${SCRIPT_OUTPUT}'`, 900),
    reply("Fix it.", FIX, 1000),
    reply("Submit.", SUBMIT, 1100),
    ...Array.from({ length: 5 }, (_, i) => reply(`Look ${i + 1}.`, "ls", 600 + i * 100)),
  );
  const out = join(dir, "scripted");
  try {
    const result = await runCli(
      [
        "swebench",
        "--subset",
        dataset,
        "--environment-class",
        "local",
        "-o",
        out,
        "-c",
        "swebench",
        "-c",
        "swebench-demo",
        "-c",
        "model.model_class=openai_textbased",
        "-c",
        "model.model_name=openai/test-model",
        "-c",
        `model.model_kwargs.api_base=${server.url}`,
        "-c",
        `model.litellm_model_registry=${registry}`,
        "-c",
        "agent.step_limit=5",
        "-c",
        "environment.timeout=1",
        "-q",
      ],
      { cwd: dir, env: { OPENAI_API_KEY: TEST_KEY, SWERUN_GLOBAL_CONFIG_DIR: settings } },
    );
    if (result.code !== 0) throw new Error(`swebench failed: ${result.stderr}`);
  } finally {
    await server.close();
  }
  return out;
}

/** `swerun swebench --subset demo` into `dir/<name>`. */
export async function recordDemo(dir: string, name: string): Promise<string> {
  const out = join(dir, name);
  const result = await runCli(
    ["swebench", "--subset", "demo", "--environment-class", "local", "-o", out, "-q"],
    {
      cwd: dir,
    },
  );
  if (result.code !== 0) throw new Error(`swebench failed: ${result.stderr}`);
  return out;
}

/** An evaluation report in the SWE-bench harness's format, with a test log next to it. */
export function writeEvalReport(run: string, id: string, resolved: boolean): void {
  const dir = join(run, "eval", "swerun-eval", id);
  mkdirSync(dir, { recursive: true });
  const report = {
    [id]: {
      patch_is_None: false,
      patch_exists: true,
      patch_successfully_applied: true,
      resolved,
      tests_status: {
        FAIL_TO_PASS: {
          success: resolved ? ["test.sh::add_2_3"] : [],
          failure: resolved ? [] : ["test.sh::add_2_3"],
        },
        PASS_TO_PASS: { success: ["test.sh::add_0_0"], failure: [] },
      },
    },
  };
  writeFileSync(join(dir, "report.json"), JSON.stringify(report, null, 2));
  writeFileSync(
    join(dir, "test_output.txt"),
    `+ bash test.sh\nrunning 2 tests\ntest.sh::add_0_0 PASSED\ntest.sh::add_2_3 ${resolved ? "PASSED" : "FAILED: gave -1, expected 5"}\n`,
  );
}

/** The mini-swe-agent trajectory fixture with `secret` planted in a command's output, written into `dir`. */
export function plantedMiniTrajectory(dir: string, secret: string): string {
  const source = join(packageRoot(), "test", "fixtures", "replay", "mini-swe-agent-toolcall.traj.json");
  const data = JSON.parse(readFileSync(source, "utf8"));
  const tool = data.messages.find((m: { role: string }) => m.role === "tool");
  tool.extra.raw_output = `hello\nOPENAI_API_KEY=${secret}\n`;
  tool.content = `<returncode>0</returncode>\n<output>\n${tool.extra.raw_output}</output>`;
  const path = join(dir, "mini.traj.json");
  writeFileSync(path, JSON.stringify(data, null, 2));
  return path;
}
