import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { CLI, runCli, startCli, waitFor } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** A config whose scripted model takes `steps` steps of `command` and then submits. */
function slowConfig(dir: string, steps: number, command: string): string {
  const outputs = Array.from({ length: steps }, (_, i) => ({
    role: "assistant",
    content: `step ${i}`,
    extra: { actions: [{ command }], cost: 0 },
  }));
  outputs.push({
    role: "assistant",
    content: "done",
    extra: { actions: [{ command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" }], cost: 0 },
  });
  const path = join(dir, "slow.yaml");
  writeFileSync(
    path,
    JSON.stringify({
      model: { model_class: "deterministic", outputs },
      environment: { cwd: dir },
    }),
  );
  return path;
}

describe("swerun run (CLI, end to end)", () => {
  it("runs the embedded demo: fixes the bundled bug, submits the diff, writes the trajectory", async () => {
    const dir = tempDir();
    const out = join(dir, "demo.traj.json");
    const result = await runCli(["run", "-c", "demo", "--yolo", "-o", out]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/exit status: Submitted/);
    const trajectory = readJson(out);
    expect(trajectory.info.exit_status).toBe("Submitted");
    expect(trajectory.info.submission).toMatch(/^diff --git a\/calc.js b\/calc.js/);
    expect(trajectory.info.submission).toMatch(/^- {2}return a - b;$/m);
    expect(trajectory.info.submission).toMatch(/^\+ {2}return a \+ b;$/m);
    // As mini-swe-agent: the submitting command gets no observation; the exit message follows it.
    expect(trajectory.messages.at(-2).extra.actions).toEqual([
      { command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff" },
    ]);
  });

  it("removes the demo's temporary working copy at the end, or keeps it with --keep-workdir, saying which", async () => {
    const dir = tempDir();
    const tmp = join(dir, "tmp");
    mkdirSync(tmp);
    const env = { TMPDIR: tmp };
    const demo = ["run", "-c", "demo", "--yolo", "-o", join(dir, "demo.traj.json")];
    const removed = await runCli(demo, { env });
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(
      new RegExp(
        `^workdir: ${tmp}/swerun-\\w+ \\(a temporary copy, removed; --keep-workdir keeps it\\)$`,
        "m",
      ),
    );
    expect(readdirSync(tmp)).toEqual([]);
    const kept = await runCli([...demo, "--keep-workdir"], { env });
    const workdir = /^workdir: (\S+) \(kept: --keep-workdir\)$/m.exec(kept.stdout)?.[1] ?? "";
    expect(readFileSync(join(workdir, "calc.js"), "utf8")).toMatch(/return a \+ b;/);
    rmSync(workdir, { recursive: true });
    // A run that ends before its agent starts (its startup command fails) leaves no copy either.
    const failed = await runCli([...demo, "-c", "run.env_startup_command=false"], { env });
    expect(failed.code).not.toBe(0);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("runs a mini-swe-agent config unchanged", async () => {
    const dir = tempDir();
    const out = join(dir, "mini.traj.json");
    const config = join(packageRoot(), "test", "fixtures", "mini-swe-agent-textbased.yaml");
    const result = await runCli([
      "run",
      "-c",
      config,
      "-c",
      `environment.cwd=${dir}`,
      "-t",
      "say hi",
      "-o",
      out,
    ]);
    expect(result.code).toBe(0);
    const trajectory = readJson(out);
    expect(trajectory.info).toMatchObject({
      exit_status: "Submitted",
      submission: "hi",
      model_stats: { instance_cost: 0.02, api_calls: 2 },
    });
    expect(trajectory.messages[1].content).toBe(
      `Please solve this issue: say hi\n\n<system_information>\n${trajectory.messages[1].content.split("\n")[3]}\n</system_information>`,
    );
    expect(trajectory.messages[3].content).toBe("<returncode>0</returncode>\n<output>\nhi</output>");
  });

  it("writes the default trajectory under runs/ of the working directory", async () => {
    const dir = tempDir();
    const result = await runCli(["run", "-c", join(packageRoot(), "config", "demo.yaml"), "--yolo"], {
      cwd: dir,
    });
    expect(result.code).toBe(0);
    const path = /trajectory: (.*)/.exec(result.stdout)?.[1] ?? "";
    expect(path.startsWith(join(dir, "runs", "run-"))).toBe(true);
    expect(readJson(path).info.exit_status).toBe("Submitted");
  });

  it("exits 2 with one line naming the file and key for a bad config", async () => {
    const dir = tempDir();
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "agent:\n  step_limt: 3\n");
    const result = await runCli(["run", "-c", "demo", "-c", bad, "--yolo"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`swerun: ${bad}: agent.step_limt: unknown key\n`);
  });

  it("exits 2 when there is no task and no terminal to ask on", async () => {
    const result = await runCli(["run", "-c", "demo", "-c", "run.task=", "--yolo"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no task: give one with -t\/--task/);
  });

  it("records an uncaught error in the trajectory (a script that runs out is a config error: exit 2)", async () => {
    const dir = tempDir();
    const config = join(dir, "short.yaml");
    writeFileSync(
      config,
      JSON.stringify({ model: { model_class: "deterministic", outputs: [] }, environment: { cwd: dir } }),
    );
    const out = join(dir, "err.traj.json");
    const result = await runCli(["run", "-c", "demo", "-c", config, "-t", "x", "-o", out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^swerun: deterministic model: the script has 0 outputs/m);
    const trajectory = readJson(out);
    expect(trajectory.info.exit_status).toBe("ScriptExhausted");
    expect(trajectory.messages.at(-1).extra.traceback).toMatch(/ScriptExhausted/);
  });

  it("leaves a valid trajectory holding the steps so far when killed mid-run", async () => {
    const dir = tempDir();
    const out = join(dir, "killed.traj.json");
    const config = slowConfig(dir, 200, "echo step; sleep 0.05");
    const run = startCli(["run", "-c", "demo", "-c", config, "-t", "long", "-o", out]);
    await waitFor(() => existsSync(out) && readJson(out).messages.length >= 12, 60_000, run.child);
    run.child.kill("SIGKILL");
    await run.done;
    const trajectory = readJson(out);
    expect(trajectory.trajectory_format).toBe("mini-swe-agent-1.1");
    expect(trajectory.info.exit_status).toBe("");
    expect(trajectory.messages.length).toBeGreaterThanOrEqual(12);
    expect(trajectory.messages[2].extra.actions).toEqual([{ command: "echo step; sleep 0.05" }]);
  });

  it("ends with UserInterruption on SIGINT without a terminal, trajectory saved", async () => {
    const dir = tempDir();
    const out = join(dir, "int.traj.json");
    const config = slowConfig(dir, 5, "sleep 30");
    const run = startCli(["run", "-c", "demo", "-c", config, "-t", "interrupt me", "-o", out]);
    await waitFor(() => run.output().includes("$ sleep 30"), 20_000, run.child);
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/exit status: UserInterruption/);
    const trajectory = readJson(out);
    expect(trajectory.info.exit_status).toBe("UserInterruption");
    expect(trajectory.messages.at(-2).extra).toMatchObject({ returncode: -1 });
  });

  it("runs as the executable bin npx starts, through its shebang", () => {
    const version = execFileSync(CLI, ["--version"], { encoding: "utf8" });
    expect(version).toMatch(/^swerun\/\d+\.\d+\.\d+ /);
  });

  it("prints help and rejects unknown commands", async () => {
    const help = await runCli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/swerun run/);
    const unknown = await runCli(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
  });
});
