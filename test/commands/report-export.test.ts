import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { killAt, runCli } from "../helpers/cli.js";
import { TEST_KEY } from "../helpers/openai-server.js";
import { recordFullScenario, recordInterruptedScenario } from "../helpers/report-scenarios.js";
import { tempDir } from "../helpers/tmp.js";

const FIXTURES = join(packageRoot(), "test", "fixtures", "report");
const REPLAY = join(packageRoot(), "test", "fixtures", "replay");
/** `SWERUN_UPDATE_REPORT_FIXTURES=1` records the swerun trajectories again and rewrites every golden file. */
const UPDATE = process.env.SWERUN_UPDATE_REPORT_FIXTURES === "1";

const CASES: Array<{ name: string; trajectory: string }> = [
  { name: "swerun-full", trajectory: join(FIXTURES, "swerun-full.traj.json") },
  { name: "swerun-interrupted", trajectory: join(FIXTURES, "swerun-interrupted.traj.json") },
  { name: "mini-swe-agent", trajectory: join(REPLAY, "mini-swe-agent-toolcall.traj.json") },
  { name: "bare-list", trajectory: join(REPLAY, "bare-list.traj.json") },
];

const read = (path: string) => readFileSync(path, "utf8");
const json = (path: string) => JSON.parse(read(path));

/** Runs report and both exports of one trajectory through the CLI; returns the files' texts by golden name. */
async function outputsOf(trajectory: string, env: Record<string, string> = {}) {
  const dir = tempDir();
  const results = await Promise.all([
    runCli(["report", trajectory, "-o", join(dir, "report.json")], { env }),
    runCli(["export", trajectory, "--format", "summary", "-o", join(dir, "summary.jsonl")], { env }),
    runCli(["export", trajectory, "--format", "judge", "-o", join(dir, "judge")], { env }),
  ]);
  for (const result of results) expect(result.stderr).not.toMatch(/swerun:/);
  expect(results.map((result) => result.code)).toEqual([0, 0, 0]);
  return {
    "report.json": read(join(dir, "report.json")),
    "summary.jsonl": read(join(dir, "summary.jsonl")),
    "judge.md": read(join(dir, "judge.md")),
    "judge.full.jsonl": read(join(dir, "judge.full.jsonl")),
  };
}

describe.runIf(UPDATE)("recording the report fixtures", () => {
  it("records the swerun trajectories", async () => {
    const full = await recordFullScenario(tempDir());
    expect(full.code, full.stderr).toBe(0);
    copyFileSync(full.trajectory, join(FIXTURES, "swerun-full.traj.json"));
    const interrupted = await recordInterruptedScenario(tempDir());
    expect(interrupted.code, interrupted.stderr).toBe(0);
    copyFileSync(interrupted.trajectory, join(FIXTURES, "swerun-interrupted.traj.json"));
  }, 60_000);
});

describe("golden reports and exports", () => {
  it.each(CASES)("$name", async ({ name, trajectory }) => {
    const outputs = await outputsOf(trajectory);
    for (const [suffix, text] of Object.entries(outputs)) {
      const golden = join(FIXTURES, `${name}.${suffix}`);
      if (UPDATE) writeFileSync(golden, text);
      expect(text, golden).toBe(read(golden));
    }
  });
});

describe("swerun run --report (a real run against the local OpenAI server)", () => {
  it("reports the retry, format error, truncation, timeout and submission; the key appears nowhere", async () => {
    const dir = tempDir();
    const run = await recordFullScenario(dir);
    expect(run.code, run.stderr).toBe(0);
    const report = json(run.report);
    expect(report.result).toEqual({
      outcome: "success",
      answer: "hello, world\n",
      exit_code: 0,
    });
    expect(report.task).toBe("greeting.txt should say hello, world");
    expect(report.provider).toBe("openai");
    expect(report.settings).toMatchObject({ temperature: 0.2, top_p: 1, max_output_tokens: 256, yolo: true });
    // One format error, not repeated: fed back without a guardrail (seed 000: nudge = 2 identical in a row).
    expect(report.stats).toMatchObject({
      turns: 5,
      llm_calls: 6,
      tool_calls_total: 5,
      tool_calls_failed: 1,
      guardrail_interventions: 0,
      truncated_responses: 1,
    });
    expect(report.stats.tool_calls_by_name).toEqual({
      echo: { succeeded: 2, failed: 0 },
      grep: { succeeded: 1, failed: 0 },
      printf: { succeeded: 1, failed: 0 },
      sleep: { succeeded: 0, failed: 1 },
    });
    const types = report.timeline.map((entry: { type: string }) => entry.type);
    expect(types.slice(0, 4)).toEqual(["llm_call", "llm_call", "tool_call", "llm_call"]);
    expect(report.timeline[0]).toMatchObject({ turn: 1, finish_reason: "error", is_retry: false });
    expect(report.timeline[0].error).toMatch(/HTTP 503/);
    // The request retried after HTTP 503 is no compaction retry (the seed's is_retry): a call of its own.
    expect(report.timeline[1]).toMatchObject({ turn: 1, is_retry: false, prompt_tokens_est: 812 });
    expect(report.timeline[1]).not.toHaveProperty("retry_reason");
    expect(report.timeline).toContainEqual({ turn: 2, type: "truncated_response" });
    expect(report.timeline.filter((entry: { type: string }) => entry.type === "guardrail")).toEqual([]);
    // The submitting command ran: measured, like every other.
    const submit = report.timeline.at(-1);
    expect(submit).toMatchObject({ type: "tool_call", name: "echo", succeeded: true });
    expect(submit.duration_s).toBeGreaterThan(0);
    const timeout = report.timeline.find((entry: { name?: string }) => entry.name === "sleep");
    expect(timeout).toMatchObject({ succeeded: false, arguments: { command: "sleep 5" } });
    expect(timeout.error).toMatch(/timed out/);
    // The report written at the run's end is the one `swerun report` builds from the trajectory.
    const rebuilt = await runCli(["report", run.trajectory]);
    expect({ ...JSON.parse(rebuilt.stdout), timestamp: null }).toEqual({ ...report, timestamp: null });
    const outputs = await outputsOf(run.trajectory);
    for (const text of [
      read(run.trajectory),
      read(run.report),
      run.stdout,
      run.stderr,
      ...Object.values(outputs),
    ]) {
      expect(text).not.toContain(TEST_KEY);
    }
    expect(outputs["judge.full.jsonl"]).toContain("key=[REDACTED]");
  }, 60_000);

  it("writes the report of a run stopped by SIGTERM: an error outcome, with the process's exit code", async () => {
    const run = await recordInterruptedScenario(tempDir());
    expect(run.code, run.stderr).toBe(0);
    const report = json(run.report);
    expect(report.result).toEqual({
      outcome: "error",
      answer: null,
      exit_code: run.code,
      error_message: "UserInterruption: the run was stopped before the agent finished (Ctrl-C or SIGTERM)",
    });
    expect(report.stats).toMatchObject({ turns: 1, tool_calls_total: 1, tool_calls_succeeded: 1 });
    const summary = JSON.parse((await runCli(["export", run.trajectory, "--format", "summary"])).stdout);
    expect(summary.status).toBe("error");
  }, 60_000);

  it("writes an error report when the run fails before the agent starts", async () => {
    const dir = tempDir();
    const result = await runCli(
      [
        "run",
        "-c",
        "demo",
        "--yolo",
        "-c",
        "run.env_startup_command=exit 3",
        "-o",
        join(dir, "t.traj.json"),
        "--report",
        join(dir, "r.json"),
      ],
      { cwd: dir },
    );
    expect(result.code).toBe(1);
    const report = json(join(dir, "r.json"));
    expect(report.result.outcome).toBe("error");
    expect(report.result.exit_code).toBe(1);
    expect(report.result.error_message).toMatch(/env_startup_command exited with 3/);
  });
});

describe("run folders", () => {
  /** A batch-shaped folder: `<id>/<id>.traj.json` per instance, with evaluation reports for some. */
  function runFolder(): string {
    const dir = tempDir();
    const source = JSON.parse(read(join(FIXTURES, "swerun-full.traj.json")));
    for (const [id, exitStatus] of [
      ["owner__repo-1", "Submitted"],
      ["owner__repo-2", "Submitted"],
      ["owner__repo-3", "LimitsExceeded"],
    ] as const) {
      mkdirSync(join(dir, id));
      source.instance_id = id;
      source.info.exit_status = exitStatus;
      source.messages.at(-1).extra.exit_status = exitStatus;
      writeFileSync(join(dir, id, `${id}.traj.json`), JSON.stringify(source));
    }
    for (const [id, resolved] of [
      ["owner__repo-1", true],
      ["owner__repo-2", false],
    ] as const) {
      mkdirSync(join(dir, "eval", "run-1", "model", id), { recursive: true });
      writeFileSync(
        join(dir, "eval", "run-1", "model", id, "report.json"),
        JSON.stringify({ [id]: { resolved } }),
      );
    }
    return dir;
  }

  it("exports every instance: status from tool errors (the seed's), the evaluation verdict beside it", async () => {
    const dir = runFolder();
    const result = await runCli(["export", dir, "--format", "summary"]);
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    // Every instance ran the same steps, one of which (`sleep 5`) timed out: a failed tool call.
    expect(lines.map((line) => [line.id, line.status, line.resolved, line.verdict])).toEqual([
      ["owner__repo-1", "failed", true, "resolved"],
      ["owner__repo-2", "failed", false, "unresolved"],
      ["owner__repo-3", "failed", null, "not_evaluated"],
    ]);
    const judge = join(dir, "out", "judge.md");
    expect((await runCli(["export", dir, "--format", "judge", "-o", judge])).code).toBe(0);
    const records = read(join(dir, "out", "judge.full.jsonl"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(records.map((record) => record.metadata.repo)).toEqual(["owner/repo", "owner/repo", "owner/repo"]);
    expect(records[0].metadata.resolved).toBe(true);
    expect(read(judge)).toContain("[->owner__repo-3-step-1]");
    const reports = await runCli(["report", dir, "--out-dir", join(dir, "reports")]);
    expect(reports.code).toBe(0);
    expect(existsSync(join(dir, "reports", "owner__repo-3.report.json"))).toBe(true);
    expect(json(join(dir, "reports", "owner__repo-3.report.json")).result.outcome).toBe("exhausted");
  });

  it("keeps a secret out of reports built from files that were not redacted", async () => {
    const dir = tempDir();
    const secret = "sk-planted-0a1b2c3d4e5f6789";
    const source = read(join(REPLAY, "mini-swe-agent-toolcall.traj.json")).replaceAll("hello, world", secret);
    const file = join(dir, "leaky.traj.json");
    writeFileSync(file, source);
    const outputs = await outputsOf(file, { OPENAI_API_KEY: secret });
    for (const text of Object.values(outputs)) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(0, 12));
    }
  });

  it("refuses bad input with one line and exit code 2", async () => {
    const dir = tempDir();
    const notTrajectory = join(dir, "x.traj.json");
    writeFileSync(notTrajectory, "{}");
    const trajectory = join(FIXTURES, "swerun-full.traj.json");
    const cases: Array<[string[], RegExp]> = [
      [["export", trajectory, "--format", "html"], /--format: "html" is not a format; use summary or judge/],
      [["export", trajectory, "--format", "judge"], /--format judge needs -o PATH/],
      [["report", join(dir, "missing")], /missing: no such file or folder/],
      [["report", notTrajectory], /x\.traj\.json: no trajectory_format/],
      [["report", trajectory, trajectory, "-o", join(dir, "r.json")], /-o writes one report, but 2/],
      [["report"], /give one or more run folders or \.traj\.json files/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(message);
    }
  });
});

describe("a killed export", () => {
  it("leaves the old file whole and a temp file named after its pid, which the next export of that file removes and names", async () => {
    const dir = tempDir();
    const output = join(dir, "existing.jsonl");
    const trajectory = CASES[0]?.trajectory as string;
    expect((await runCli(["export", trajectory, "-o", output])).code).toBe(0);
    const before = read(output);
    const killed = await killAt("atomic-rename", ["export", trajectory, trajectory, "-o", output]);
    expect(killed.signal).toBe("SIGKILL");
    const temps = readdirSync(dir).filter((name) => name.endsWith(".tmp"));
    expect(temps).toEqual([expect.stringMatching(/^\.existing\.jsonl\.\d+\.\d+\.tmp$/)]);
    expect(read(output)).toBe(before);

    const next = await runCli(["export", trajectory, "-o", output]);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(
      `swerun: removed ${join(dir, temps[0] as string)}: left by an earlier swerun killed while writing ${output}`,
    );
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    expect(read(output)).toBe(before);
  });
});
