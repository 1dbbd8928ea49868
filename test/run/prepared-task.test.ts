import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { UserError } from "../../src/errors.js";
import { runPreparedTask } from "../../src/run/run.js";
import { act, SUBMIT } from "../helpers/agent.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

function scripted(dir: string, outputs: Array<Record<string, unknown>>) {
  const path = join(dir, "config.json");
  writeFileSync(path, JSON.stringify({ model: { model_class: "deterministic", outputs } }));
  return loadConfig(["default", path, `environment.cwd=${dir}`, "agent.mode=yolo"]);
}

describe("runPreparedTask (prepare → runTask → failedRun)", () => {
  it("runs the task once its preparation is done", async () => {
    const dir = tempDir();
    const config = scripted(dir, [act("cat prepared.txt"), SUBMIT]);
    const output = join(dir, "ok.traj.json");
    const result = await runPreparedTask("the task", { config, output }, async () => {
      writeFileSync(join(dir, "prepared.txt"), "ready\n");
    });
    expect(result.exit_status).toBe("Submitted");
    expect(JSON.stringify(readJson(output).messages)).toContain("ready");
  });

  it("records a preparation that throws as a run that failed before its agent, with the raw task", async () => {
    const dir = tempDir();
    const config = scripted(dir, [act("touch ran.txt"), SUBMIT]);
    const output = join(dir, "failed.traj.json");
    const result = await runPreparedTask("the raw task", { config, output }, async () => {
      throw new Error("no checkout");
    });
    expect((result.error as Error).message).toBe("no checkout");
    expect(result.api_calls).toBe(0);
    const trajectory = readJson(output);
    expect(trajectory.messages.at(-1).role).toBe("exit");
    expect(JSON.stringify(trajectory.messages.at(-1))).toContain("no checkout");
    expect(trajectory.info.task).toBe("the raw task");
    expect(existsSync(join(dir, "ran.txt"))).toBe(false);
  });

  it("throws on the errors it is told to pass through, writing nothing", async () => {
    const dir = tempDir();
    const config = scripted(dir, [SUBMIT]);
    const output = join(dir, "user.traj.json");
    await expect(
      runPreparedTask(
        "t",
        { config, output },
        async () => {
          throw new UserError("bad flag");
        },
        (error) => error instanceof UserError,
      ),
    ).rejects.toThrow("bad flag");
    expect(existsSync(output)).toBe(false);
  });
});
