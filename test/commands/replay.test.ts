import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EXPECTED_TRAJECTORY } from "../../src/trajectory/reader.js";
import { packageRoot } from "../../src/util/package-root.js";
import { runCli } from "../helpers/cli.js";
import { completion, OpenAIServer, TEST_KEY, TEST_PRICES } from "../helpers/openai-server.js";
import { tempDir } from "../helpers/tmp.js";

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
const readJson = (path: string): any => JSON.parse(readFileSync(path, "utf8"));
const FIXTURES = join(packageRoot(), "test", "fixtures", "replay");
const CALC = join(packageRoot(), "config", "fixtures", "calc");

/** Working directories that runs with `-c demo` made from run.setup_dir; removed after each test. */
const workdirs: string[] = [];
afterEach(() => {
  for (const dir of workdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI from a fresh directory (nothing lands in the checkout's runs/), noting the workdir it made. */
async function replayCli(args: string[]) {
  const result = await runCli(args, { cwd: tempDir() });
  const workdir = /^workdir: (\S+)/m.exec(result.stdout)?.[1];
  if (workdir?.startsWith(join(tmpdir(), "swerun-"))) workdirs.push(workdir);
  return result;
}

/** A copy of the demo's project, optionally altered; `-c demo` commits it when the replay starts. */
function calcCheckout(alter?: (dir: string) => void): string {
  const dir = tempDir("swerun-replay-checkout-");
  cpSync(CALC, dir, { recursive: true });
  alter?.(dir);
  return dir;
}

/** `git init` and a first commit, as the demo's startup command does. */
function commitAll(dir: string): void {
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: dir });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "base");
}

/** A directory holding greeting.txt, for the hand-written mini-swe-agent fixtures. */
function greetingDir(): string {
  const dir = tempDir();
  writeFileSync(join(dir, "greeting.txt"), "hello\n");
  return dir;
}

/** A scripted text output running `command` (its `extra.actions`, as mini-swe-agent's scripted model needs). */
function scripted(thought: string, command: string, extra: Record<string, unknown> = {}) {
  const block = `\`\`\`mswea_bash_command\n${command}\n\`\`\``;
  return {
    role: "assistant",
    content: `${thought}\n\n${block}`,
    extra: { actions: [{ command }], ...extra },
  };
}

/** The scripted model that takes over the demo after step 2: fix, then submit. */
function takeoverConfig(dir: string, costPerCall = 0): string {
  const path = join(dir, "takeover.json");
  writeFileSync(
    path,
    JSON.stringify({
      model: {
        model_class: "deterministic",
        model_name: "deterministic/takeover",
        outputs: [
          scripted("Fix it.", "sed -i 's/return a - b;/return a + b;/' calc.js && node test.js", {
            cost: costPerCall,
          }),
          scripted("Submit.", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff", {
            cost: costPerCall,
          }),
        ],
      },
    }),
  );
  return path;
}

let shared: string;
let demo: string;
let demoWorkdir: string;

beforeAll(async () => {
  shared = mkdtempSync(join(tmpdir(), "swerun-replay-cli-"));
  demo = join(shared, "demo.traj.json");
  const result = await runCli(["run", "-c", "demo", "--yolo", "-o", demo]);
  expect(result.code).toBe(0);
  demoWorkdir = /^workdir: (\S+)/m.exec(result.stdout)?.[1] ?? "";
});

afterAll(() => {
  rmSync(shared, { recursive: true, force: true });
  if (demoWorkdir) rmSync(demoWorkdir, { recursive: true, force: true });
});

describe("swerun replay (CLI, local)", () => {
  it("replays the demo's trajectory in a fresh copy: every step matches, the same submission, exit 0", async () => {
    const dir = tempDir();
    const out = join(dir, "replay.traj.json");
    const reportPath = join(dir, "report.json");
    const result = await replayCli(["replay", demo, "-c", "demo", "-o", out, "--report", reportPath]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const rows = result.stdout.split("\n").filter((line) => /^ {3}\d {2}/.test(line));
    expect(rows.map((row) => row.slice(0, 16).trim().split(/\s+/))).toEqual([
      ["1", "exact"],
      ["2", "normalised"],
      ["3", "exact"],
      ["4", "exact"],
    ]);
    expect(result.stdout).toMatch(/replayed 4 of 4 recorded steps: 3 exact, 1 normalised, 0 different\n/);
    expect(result.stdout).toMatch(/submission: same\n/);
    // The copy it replayed in is removed at the end (--keep-workdir keeps it), and said so.
    const workdir = /^workdir: (\S+) \(a temporary copy, removed; --keep-workdir keeps it\)$/m.exec(
      result.stdout,
    )?.[1];
    expect(workdir).toMatch(/\/swerun-replay-\w+$/);
    expect(existsSync(workdir ?? "")).toBe(false);
    const report = readJson(reportPath);
    expect(report).toMatchObject({
      trajectory: demo,
      trajectory_format: "mini-swe-agent-1.1",
      output: out,
      replayed_steps: 4,
      divergent_steps: [],
      exit_status: { recorded: "Submitted", replayed: "Submitted" },
      submission: { status: "same" },
    });
    expect(report.steps[1].actions[0].recorded.output).toMatch(/\/tmp\/swerun-\w+\/test\.js/);
    const replayed = readJson(out);
    expect(replayed.info.replay).toEqual({
      trajectory: demo,
      trajectory_format: "mini-swe-agent-1.1",
      until: null,
      continue: false,
      recorded_steps: 4,
      replayed_steps: 4,
      divergent_steps: [],
    });
    expect(replayed.info).toMatchObject({
      exit_status: "Submitted",
      submission: readJson(demo).info.submission,
    });
    expect(replayed.info.model_stats).toEqual({ instance_cost: 0, api_calls: 4 });
    expect(replayed.messages.map((m: { role: string }) => m.role)).toEqual(
      readJson(demo).messages.map((m: { role: string }) => m.role),
    );
  });

  it("reports exactly the step whose output an altered checkout changes", async () => {
    const checkout = calcCheckout((dir) => writeFileSync(join(dir, "NOTES.md"), "notes\n"));
    const dir = tempDir();
    const reportPath = join(dir, "report.json");
    const args = [
      "replay",
      demo,
      "-c",
      "demo",
      "--cwd",
      checkout,
      "--report",
      reportPath,
      "-o",
      join(dir, "r.traj.json"),
    ];
    const result = await runCli(args);
    expect(result.code).toBe(0);
    expect(readJson(reportPath).divergent_steps).toEqual([1]);
    expect(result.stdout).toMatch(/^ {3}1 {2}DIFFERENT {3}0 {8}ls && cat calc.js test.js$/m);
    expect(result.stdout).toMatch(/^ {6}│ \+NOTES\.md$/m);
    expect(result.stdout).toMatch(/1 DIFFERENT \(first at step 1\)/);
    expect(result.stdout).toMatch(/submission: same\n/);
  });

  it("exits 1 with a diff of the submissions when the replay submits something else", async () => {
    const checkout = calcCheckout((dir) => {
      const path = join(dir, "calc.js");
      writeFileSync(
        path,
        readFileSync(path, "utf8").replace("// A tiny calculator", "// A small calculator"),
      );
    });
    const out = join(tempDir(), "replay.traj.json");
    const reportPath = join(tempDir(), "report.json");
    const result = await replayCli([
      "replay",
      demo,
      "-c",
      "demo",
      "--cwd",
      checkout,
      "-o",
      out,
      "--report",
      reportPath,
    ]);
    expect(result.code).toBe(1);
    // The submitting command has no observation (as in mini-swe-agent): its difference is the submission's.
    expect(readJson(reportPath).divergent_steps).toEqual([1]);
    expect(result.stdout).toMatch(
      /submission: DIFFERENT\n--- recorded submission\n\+\+\+ replayed submission\n/,
    );
    expect(result.stdout).toMatch(/^- \/\/ A tiny calculator with a bug for swerun's demo\.$/m);
    expect(result.stdout).toMatch(/^\+ \/\/ A small calculator with a bug for swerun's demo\.$/m);
    expect(readJson(out).info.replay.divergent_steps).toEqual([1]);
  });

  it("replays a tool-call trajectory of its own, several actions per step", async () => {
    const dir = tempDir();
    const call = (id: string, command: string) => ({
      id,
      type: "function",
      function: { name: "bash", arguments: JSON.stringify({ command }) },
    });
    const step = (calls: Array<[string, string]>) => ({
      role: "assistant",
      content: "",
      tool_calls: calls.map(([id, command]) => call(id, command)),
      extra: { actions: calls.map(([tool_call_id, command]) => ({ command, tool_call_id })), cost: 0.5 },
    });
    const config = join(dir, "toolcall.json");
    writeFileSync(
      config,
      JSON.stringify({
        model: {
          model_class: "deterministic_toolcall",
          outputs: [
            step([
              ["call_1", "cat greeting.txt"],
              ["call_2", "echo 'hello, world' > greeting.txt"],
            ]),
            step([["call_3", "wc -c < greeting.txt"]]),
            step([
              ["call_4", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat greeting.txt"],
              ["call_5", "echo never runs"],
            ]),
          ],
        },
      }),
    );
    const recorded = join(dir, "toolcall.traj.json");
    const cwd = greetingDir();
    const run = await runCli([
      "run",
      "-c",
      "default",
      "-c",
      config,
      "-c",
      `environment.cwd=${cwd}`,
      "-t",
      "greet",
      "--yolo",
      "-o",
      recorded,
    ]);
    expect(run.code).toBe(0);
    const out = join(dir, "replay.traj.json");
    const result = await replayCli(["replay", recorded, "--cwd", greetingDir(), "-o", out]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\(mini-swe-agent-1\.1, toolcall actions\)/);
    expect(result.stdout).toMatch(/replayed 3 of 3 recorded steps: 3 exact, 0 normalised, 0 different\n/);
    const messages = readJson(out).messages;
    expect(
      messages
        .filter((m: { role: string }) => m.role === "tool")
        .map((m: { tool_call_id: string }) => m.tool_call_id),
    ).toEqual(["call_1", "call_2", "call_3", "call_4", "call_5"]);
    expect(messages.at(-2).extra).toMatchObject({ exception_info: "action was not executed" });
    expect(readJson(out).info.model_stats).toEqual({ instance_cost: 1.5, api_calls: 3 });
  });

  it("replays mini-swe-agent's tool-call trajectory: format error added as recorded, the date normalised", async () => {
    const out = join(tempDir(), "replay.traj.json");
    const result = await replayCli([
      "replay",
      join(FIXTURES, "mini-swe-agent-toolcall.traj.json"),
      "--cwd",
      greetingDir(),
      "-o",
      out,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {3}2 {2}replayed {4}- {8}\(format error: added as recorded\)$/m);
    expect(result.stdout).toMatch(/^ {6}normalised {2}0 {7} date -u/m);
    expect(result.stdout).toMatch(/2 exact, 1 normalised, 0 different, 1 added as recorded\n/);
    expect(readJson(out).info.model_stats.api_calls).toBe(4);
    expect(readJson(out).info.model_stats.instance_cost).toBeCloseTo(0.0375, 10);
  });

  it("replays a bare message list of older mini-swe-agent (```bash blocks, old submit marker)", async () => {
    const out = join(tempDir(), "replay.traj.json");
    const result = await replayCli([
      "replay",
      join(FIXTURES, "bare-list.traj.json"),
      "--cwd",
      greetingDir(),
      "-o",
      out,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\(message-list, text actions\)/);
    expect(result.stdout).toMatch(/3 exact, 0 normalised, 0 different, 1 added as recorded\n/);
    expect(result.stdout).toMatch(/submission: same\n/);
    expect(readJson(out).info).toMatchObject({ exit_status: "Submitted", submission: "hello, world\n" });
  });

  it("--until N --continue: the scripted model carries on from step N with the whole conversation", async () => {
    const dir = tempDir();
    const out = join(dir, "continued.traj.json");
    const result = await replayCli([
      "replay",
      demo,
      "-c",
      "demo",
      "-c",
      takeoverConfig(dir),
      "--until",
      "2",
      "--continue",
      "-o",
      out,
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/deterministic\/takeover takes over after step 2\n/);
    expect(result.stdout).toMatch(/─── step 3\nFix it\./);
    expect(result.stdout).toMatch(/submission: same\n/);
    const trajectory = readJson(out);
    const recorded = readJson(demo);
    expect(trajectory.info).toMatchObject({
      exit_status: "Submitted",
      submission: recorded.info.submission,
      model_stats: { api_calls: 4 },
      config: {
        model_type: "minisweagent.models.test_models.DeterministicModel",
        model: { model_name: "deterministic/takeover" },
      },
      replay: { until: 2, continue: true, replayed_steps: 2 },
    });
    const contents = trajectory.messages.map((m: { content: string }) => m.content);
    expect(contents.slice(0, 5)).toEqual(
      recorded.messages.slice(0, 5).map((m: { content: string }) => m.content),
    );
    expect(contents[6]).toMatch(/^Fix it\./);
    expect(trajectory.messages.filter((m: { role: string }) => m.role === "exit")).toHaveLength(1);
  });

  it("--continue -m: a model behind an OpenAI-compatible API carries on a text trajectory with text actions", async () => {
    const server = await OpenAIServer.start();
    try {
      const block = (command: string) => `\`\`\`mswea_bash_command\n${command}\n\`\`\``;
      server.push(
        {
          body: completion({
            content: `Fix.\n\n${block("sed -i 's/return a - b;/return a + b;/' calc.js")}`,
          }),
        },
        {
          body: completion({
            content: `Submit.\n\n${block("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff")}`,
          }),
        },
      );
      const dir = tempDir();
      const registry = join(dir, "prices.json");
      writeFileSync(registry, JSON.stringify(TEST_PRICES));
      const checkout = calcCheckout();
      commitAll(checkout);
      const out = join(dir, "continued.traj.json");
      const args = [
        "replay",
        demo,
        "--cwd",
        checkout,
        "--until",
        "2",
        "--continue",
        "-m",
        "openai/test-model",
      ];
      const result = await runCli([...args, "-c", `model.model_kwargs.api_base=${server.url}`, "-o", out], {
        cwd: dir,
        env: {
          OPENAI_API_KEY: TEST_KEY,
          SWERUN_GLOBAL_CONFIG_DIR: dir,
          LITELLM_MODEL_REGISTRY_PATH: registry,
        },
      });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/submission: same\n/);
      const sent = server.requests[0]?.body;
      expect(sent.tools).toBeUndefined();
      expect(sent.messages.map((m: { role: string }) => m.role)).toEqual([
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
      ]);
      expect(sent.messages[5].content).toContain(`${checkout}/test.js`);
      const trajectory = readJson(out);
      expect(trajectory.info.config).toMatchObject({
        model_type: "minisweagent.models.litellm_textbased_model.LitellmTextbasedModel",
        model: { model_class: "openai_textbased" },
      });
      expect(trajectory.info.model_stats.api_calls).toBe(4);
      expect(JSON.stringify(trajectory)).not.toContain(TEST_KEY);
    } finally {
      await server.close();
    }
  });

  it("--continue counts the limits from the recorded run's usage", async () => {
    const dir = tempDir();
    const costly = join(dir, "costly.json");
    const outputs = ["ls", "node test.js", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"].map((command) =>
      scripted("", command, { cost: 1 }),
    );
    writeFileSync(costly, JSON.stringify({ model: { outputs } }));
    const recorded = join(dir, "costly.traj.json");
    expect((await replayCli(["run", "-c", "demo", "-c", costly, "--yolo", "-o", recorded])).code).toBe(0);
    const out = join(dir, "continued.traj.json");
    const args = [
      "replay",
      recorded,
      "-c",
      "demo",
      "-c",
      takeoverConfig(dir, 1),
      "--until",
      "2",
      "--continue",
      "-o",
      out,
    ];
    const result = await replayCli([...args, "-l", "2.5"]);
    expect(result.stdout).toMatch(/limit reached: LimitsExceeded/);
    expect(readJson(out).info).toMatchObject({
      exit_status: "LimitsExceeded",
      model_stats: { instance_cost: 3, api_calls: 3 },
    });
    expect(result.stdout).toMatch(/submission: same\n/);
    expect(result.code).toBe(0);
  });

  it("finishes a run that crashed, from where its trajectory ends", async () => {
    const dir = tempDir();
    const crashed = readJson(demo);
    crashed.messages = crashed.messages.slice(0, 6);
    crashed.info.exit_status = "";
    crashed.info.submission = "";
    const path = join(dir, "crashed.traj.json");
    writeFileSync(path, JSON.stringify(crashed));
    const out = join(dir, "finished.traj.json");
    const result = await replayCli([
      "replay",
      path,
      "-c",
      "demo",
      "-c",
      takeoverConfig(dir),
      "--continue",
      "-o",
      out,
    ]);
    expect(result.stdout).toMatch(/takes over after step 2\n/);
    expect(readJson(out).info).toMatchObject({
      exit_status: "Submitted",
      submission: readJson(demo).info.submission,
    });
    expect(result.stdout).toMatch(/submission: DIFFERENT\n/);
    expect(result.code).toBe(1);
  });

  it("--until without --continue stops there and says where to look", async () => {
    const out = join(tempDir(), "until.traj.json");
    const result = await replayCli(["replay", demo, "-c", "demo", "--until", "1", "-o", out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/replayed 1 of 4 recorded steps/);
    expect(result.stdout).toMatch(/submission: not compared \(the replay stopped after step 1\)\n/);
    const workdir =
      /workdir: (\S+) \(stopped after step 1; inspect it with: cd \1\)/.exec(result.stdout)?.[1] ?? "";
    expect(readFileSync(join(workdir, "calc.js"), "utf8")).toMatch(/return a - b;/);
    expect(readJson(out).info).toMatchObject({
      exit_status: "ReplayStopped",
      replay: { until: 1, replayed_steps: 1 },
    });
  });

  it("replays a `swerun swebench --subset demo` trajectory locally in a fresh checkout", async () => {
    const dir = tempDir();
    const run = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--environment-class",
      "local",
      "--filter",
      "swerun-demo__calc",
      "-o",
      join(dir, "sb"),
      "-q",
    ]);
    expect(run.code).toBe(0);
    const recorded = join(dir, "sb", "swerun-demo__calc-1", "swerun-demo__calc-1.traj.json");
    const checkout = join(dir, "checkout");
    cpSync(join(packageRoot(), "config", "swebench-demo", "calc"), checkout, { recursive: true });
    commitAll(checkout);
    const out = join(dir, "replay.traj.json");
    const result = await replayCli(["replay", recorded, "--cwd", checkout, "-o", out]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/replayed 4 of 4 recorded steps: \d exact, \d normalised, 0 different\n/);
    expect(result.stdout).toMatch(/submission: same\n/);
    expect(readJson(out).instance_id).toBe("swerun-demo__calc-1");
  });

  it("exits 2 with one line for files that are not trajectories and for bad flags", async () => {
    const dir = tempDir();
    const notJson = join(dir, "notes.txt");
    writeFileSync(notJson, "hello");
    const bad = await replayCli(["replay", notJson]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      new RegExp(`^swerun: ${notJson}: not JSON \\(.*\\); expected a trajectory file: `),
    );
    expect(bad.stderr.split("\n")).toHaveLength(2);
    expect(bad.stderr.trim().endsWith(EXPECTED_TRAJECTORY)).toBe(true);
    const swe = join(dir, "swe-agent.traj");
    writeFileSync(swe, JSON.stringify({ trajectory: [], history: [], info: {} }));
    expect((await replayCli(["replay", swe])).stderr).toMatch(
      /: no trajectory_format; expected a trajectory file/,
    );
    const missing = await replayCli(["replay", join(dir, "missing.traj.json")]);
    expect(missing).toMatchObject({
      code: 2,
      stderr: `swerun: ${join(dir, "missing.traj.json")}: cannot read the trajectory: no such file\n`,
    });
    const until = await replayCli(["replay", demo, "-c", "demo", "--until", "9"]);
    expect(until).toMatchObject({
      code: 2,
      stderr: "swerun: --until 9: expected a step number from 0 to 4 (the trajectory has 4 steps)\n",
    });
    const noCwd = await replayCli(["replay", join(FIXTURES, "bare-list.traj.json")]);
    expect(noCwd.stderr).toBe(
      "swerun: the trajectory records no working directory: give the checkout to replay in with --cwd DIR\n",
    );
    const gone = readJson(demo);
    gone.info.config.environment.cwd = join(dir, "gone");
    const gonePath = join(dir, "gone.traj.json");
    writeFileSync(gonePath, JSON.stringify(gone));
    expect((await replayCli(["replay", gonePath])).stderr).toBe(
      `swerun: environment.cwd: no such directory: ${join(dir, "gone")} (the recorded run's directory, now gone): give the checkout to replay in with --cwd DIR\n`,
    );
    const same = await replayCli(["replay", demo, "-c", "demo", "-o", demo]);
    expect(same).toMatchObject({
      code: 2,
      stderr: `swerun: -o ${demo}: that is the trajectory being replayed\n`,
    });
    const badEnv = await replayCli(["replay", demo, "-c", "demo", "-c", "environment.imagee=x"]);
    expect(badEnv).toMatchObject({
      code: 2,
      stderr: "swerun: -c environment.imagee=x: environment.imagee: unknown key\n",
    });
  });
});
