import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recordedEnvironment } from "../../src/replay/config.js";
import { loadTrajectory } from "../../src/trajectory/reader.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

interface Message {
  role: string;
  content: unknown;
  extra?: Record<string, unknown>;
}

/** The demo's run under one environment class: its trajectory, and its working directory written `{workdir}`. */
async function demo(environmentClass: string) {
  const out = join(tempDir(), `${environmentClass}.traj.json`);
  const result = await runCli([
    "run",
    "-c",
    "demo",
    "--yolo",
    "--keep-workdir", // the test reads the fixed file; it removes the copy itself
    "--environment-class",
    environmentClass,
    "-o",
    out,
  ]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const workdir = /^workdir: (\S+)/m.exec(result.stdout)?.[1] ?? "";
  expect(workdir).not.toBe("");
  const text = readFileSync(out, "utf8").replaceAll(workdir, "{workdir}");
  const trajectory = JSON.parse(text);
  // What differs between any two runs: when things happened and how long they took.
  const messages = (trajectory.messages as Message[]).map(({ extra, ...message }) => {
    if (!extra) return message;
    const { timestamp: _timestamp, duration_s: _duration, submit_action, ...rest } = extra;
    if (!submit_action) return { ...message, extra: rest };
    const { timestamp: _at, duration_s: _took, ...action } = submit_action as Record<string, unknown>;
    return { ...message, extra: { ...rest, submit_action: action } };
  });
  return { trajectory, messages, workdir };
}

describe("swerun run --environment-class bubblewrap (CLI, end to end)", () => {
  it("runs the embedded demo in the sandbox: the same messages as the local demo, Submitted", async () => {
    const sandboxed = await demo("bubblewrap");
    const local = await demo("local");
    expect(sandboxed.trajectory.info.exit_status).toBe("Submitted");
    expect(sandboxed.trajectory.info.submission).toMatch(/^\+ {2}return a \+ b;$/m);
    expect(sandboxed.trajectory.info.submission).toBe(local.trajectory.info.submission);
    expect(sandboxed.messages).toEqual(local.messages);
    expect(sandboxed.messages.length).toBeGreaterThan(8);
    expect(sandboxed.trajectory.info.config.environment_type).toBe(
      "minisweagent.environments.extra.bubblewrap.BubblewrapEnvironment",
    );
    expect(sandboxed.trajectory.info.config.environment).toMatchObject({
      environment_class: "bubblewrap",
      executable: "bwrap",
      cwd: "{workdir}",
    });
    // The demo's copy (the setup_dir) was the sandbox's working directory, and it changed there.
    expect(readFileSync(join(sandboxed.workdir, "calc.js"), "utf8")).toMatch(/return a \+ b;/);
    for (const run of [sandboxed, local]) rmSync(run.workdir, { recursive: true, force: true });
  });

  it("replays a bubblewrap run in a sandbox: the recorded class, the same steps and submission", async () => {
    const { trajectory } = await demo("bubblewrap");
    const recorded = join(tempDir(), "recorded.traj.json");
    writeFileSync(recorded, JSON.stringify(trajectory));
    // As mini-swe-agent writes it: no environment_class, the class in environment_type.
    const { environment_class: _class, ...minis } = trajectory.info.config.environment;
    const mini = join(tempDir(), "mini.traj.json");
    writeFileSync(
      mini,
      JSON.stringify({
        ...trajectory,
        info: { ...trajectory.info, config: { ...trajectory.info.config, environment: minis } },
      }),
    );
    for (const path of [recorded, mini])
      expect(recordedEnvironment(loadTrajectory(path)).environment).toMatchObject({
        environment_class: "bubblewrap",
        executable: "bwrap",
      });
    const out = join(tempDir(), "replay.traj.json");
    const args = ["replay", recorded, "-c", "demo", "--environment-class", "bubblewrap", "-o", out];
    const result = await runCli(args);
    expect(result.stdout).toMatch(/replayed 4 of 4 recorded steps: .* 0 different/);
    expect(result.stdout).toMatch(/submission: same/);
    expect(result.code).toBe(0);
    const replayed = JSON.parse(readFileSync(out, "utf8"));
    expect(replayed.info.config.environment_type).toBe(
      "minisweagent.environments.extra.bubblewrap.BubblewrapEnvironment",
    );
  });

  it("runs the SWE-bench demo batch in sandboxes: the local batch's predictions", async () => {
    const preds = async (environmentClass: string) => {
      const out = join(tempDir(), environmentClass);
      const args = [
        "swebench",
        "--subset",
        "demo",
        "--environment-class",
        environmentClass,
        "-w",
        "2",
        "-o",
        out,
      ];
      const result = await runCli(args);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/exit statuses: Submitted 3/);
      return JSON.parse(readFileSync(join(out, "preds.json"), "utf8"));
    };
    const sandboxed = await preds("bubblewrap");
    expect(Object.keys(sandboxed)).toHaveLength(3);
    expect(sandboxed).toEqual(await preds("local"));
  });

  it("refuses mini-swe-agent's classes that cannot run here: one line, exit 2, what to use", async () => {
    const out = join(tempDir(), "never.traj.json");
    const result = await runCli([
      "run",
      "-c",
      "demo",
      "--yolo",
      "--environment-class",
      "swerex_modal",
      "-o",
      out,
    ]);
    expect(result.stderr).toBe(
      `swerun: --environment-class: environment.environment_class: "swerex_modal" (mini-swe-agent's SWE-ReX on Modal) does not run in swerun: use docker, bubblewrap or kubernetes\n`,
    );
    expect(result.code).toBe(2);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses a missing bwrap before the first model call: one line, exit 2", async () => {
    const out = join(tempDir(), "missing.traj.json");
    const result = await runCli([
      "run",
      "-c",
      "demo",
      "--yolo",
      "--environment-class",
      "bubblewrap",
      "-c",
      "environment.executable=/nonexistent/bwrap",
      "-o",
      out,
    ]);
    expect(result.stderr).toBe(
      'swerun: environment.executable: "/nonexistent/bwrap" not found: install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap) or set environment.executable to its path\n',
    );
    expect(result.code).toBe(2);
    expect(result.stdout).not.toMatch(/step 1/);
  });
});
