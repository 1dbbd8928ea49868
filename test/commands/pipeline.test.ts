import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { writeDataset } from "../helpers/datasets.js";
import { tempDir } from "../helpers/tmp.js";
import { startOnTerminal } from "../helpers/tty.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));
const FAILING_STARTUP = "run.env_startup_command=echo the-startup-broke && exit 3";
const SWEBENCH_LOCAL = ["--environment-class", "local", "-c", "swebench", "-c", "swebench-demo"];

/** What every command must say and record when run.env_startup_command fails: the same outcome. */
function expectStartupFailure(trajectoryPath: string) {
  const trajectory = readJson(trajectoryPath);
  expect(trajectory.info.exit_status).toBe("StartupCommandFailed");
  expect(trajectory.info.model_stats).toEqual({ instance_cost: 0, api_calls: 0 });
  expect(trajectory.messages).toHaveLength(1);
  expect(trajectory.messages[0].content).toBe("run.env_startup_command exited with 3: the-startup-broke");
  return trajectory;
}

describe("every command builds its run with the one pipeline (src/run)", () => {
  it("run: a failing env_startup_command ends StartupCommandFailed, recorded, exit 1", async () => {
    const dir = tempDir();
    const out = join(dir, "run.traj.json");
    const result = await runCli(["run", "-c", "demo", "--yolo", "-c", FAILING_STARTUP, "-o", out]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("exit status: StartupCommandFailed");
    expect(result.stdout).toContain(`trajectory: ${out}`);
    expect(result.stderr).toBe(
      "swerun: StartupCommandFailed: run.env_startup_command exited with 3: the-startup-broke\n",
    );
    const trajectory = expectStartupFailure(out);
    expect(trajectory.info.config.model_type).toBe("minisweagent.models.test_models.DeterministicModel");
    expect(trajectory.info.config.environment_type).toBe("minisweagent.environments.local.LocalEnvironment");
  });

  it("swebench: the instance ends StartupCommandFailed, with the same trajectory and an empty prediction", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 1);
    const out = join(dir, "out");
    const result = await runCli([
      "swebench",
      "--subset",
      dataset,
      ...SWEBENCH_LOCAL,
      "-c",
      FAILING_STARTUP,
      "-o",
      out,
      "-q",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("exit statuses: StartupCommandFailed 1");
    const trajectory = expectStartupFailure(join(out, "test__calc-1", "test__calc-1.traj.json"));
    expect(trajectory.instance_id).toBe("test__calc-1");
    expect(trajectory.info.config.model_type).toBe("minisweagent.models.test_models.DeterministicModel");
    expect(readJson(join(out, "preds.json"))["test__calc-1"].model_patch).toBe("");
  });

  it("swebench-single: runs env_startup_command too (it used not to) and ends the same way, exit 1", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 1);
    const out = join(dir, "single");
    const args = ["swebench-single", "--subset", dataset, "-i", "0", ...SWEBENCH_LOCAL, "-o", out];
    const result = await runCli([...args, "-c", FAILING_STARTUP]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("exit status: StartupCommandFailed");
    expect(result.stderr.split("\n").filter((line) => line.startsWith("swerun:"))).toEqual([
      "swerun: StartupCommandFailed: run.env_startup_command exited with 3: the-startup-broke",
    ]);
    const trajectory = expectStartupFailure(join(out, "test__calc-1.traj.json"));
    expect(trajectory.instance_id).toBe("test__calc-1");
    expect(readJson(join(out, "preds.json"))["test__calc-1"].model_patch).toBe("");

    // A startup command that works runs in the checkout, rendered with the instance's fields (as in a batch).
    const ok = await runCli([
      ...args,
      "-c",
      "run.env_startup_command=echo {{ instance_id }} > startup-ran.txt",
    ]);
    expect(ok.code).toBe(0);
    const submitted = readJson(join(out, "test__calc-1.traj.json"));
    expect(submitted.info.exit_status).toBe("Submitted");
    expect(submitted.info.submission).toContain("+test__calc-1");
    expect(submitted.info.submission).toContain("startup-ran.txt");
  });

  it("replay: a failing env_startup_command ends it the same way before any step, exit 1", async () => {
    const dir = tempDir();
    const recorded = join(dir, "demo.traj.json");
    expect((await runCli(["run", "-c", "demo", "--yolo", "-o", recorded])).code).toBe(0);
    const out = join(dir, "replay.traj.json");
    const result = await runCli(["replay", recorded, "-c", "demo", "-c", FAILING_STARTUP, "-o", out]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("exit status: StartupCommandFailed");
    expect(result.stdout).not.toContain("Replaying");
    expect(result.stderr).toBe(
      "swerun: StartupCommandFailed: run.env_startup_command exited with 3: the-startup-broke\n",
    );
    expectStartupFailure(out);
  });

  it("swebench-single honours human mode on a terminal: the person types the commands", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 1);
    const out = join(dir, "single");
    const tty = startOnTerminal(
      [
        "swebench-single",
        "--subset",
        dataset,
        "-i",
        "0",
        ...SWEBENCH_LOCAL,
        "-c",
        "agent.mode=human",
        "-o",
        out,
      ],
      dir,
    );
    await tty.until(/command> /);
    tty.type("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo typed-by-a-person\r");
    expect(await tty.done, tty.output().slice(-2000)).toBe(0);
    const trajectory = readJson(join(out, "test__calc-1.traj.json"));
    expect(trajectory.info.exit_status).toBe("Submitted");
    expect(trajectory.info.submission).toBe("typed-by-a-person\n");
    expect(trajectory.info.config.model_type).toBe("swerun.models.human.HumanModel");
    expect(existsSync(join(out, "preds.json"))).toBe(true);
  });
});
