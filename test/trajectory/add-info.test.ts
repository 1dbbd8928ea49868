import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Message } from "../../src/messages.js";
import { addTrajectoryInfo } from "../../src/trajectory/add-info.js";
import { trajectoryConfig, trajectoryInfo } from "../../src/trajectory/format.js";
import { TrajectoryWriter } from "../../src/trajectory/writer.js";
import { jsonWithFloats } from "../../src/util/float-json.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

const config = trajectoryConfig(
  { step_limit: 0, system_template: "x".repeat(2000) },
  { model: { model_name: "m" }, model_type: "t" },
  { environment: { cwd: "/" }, environment_type: "e" },
);

/** A step of an assistant message (cost 0.0123) and a 5 KB observation. */
function step(messages: Message[], index: number): void {
  messages.push({ role: "assistant", content: `step ${index} é`, extra: { cost: 0.0123 } });
  messages.push({ role: "user", content: `output ${index}\n${'ab"c\\ '.repeat(800)}` });
}

describe("addTrajectoryInfo", () => {
  it("adds keys to the info of a written trajectory in the writer's layout, and of any other", async () => {
    const path = join(tempDir(), "t.traj.json");
    const writer = new TrajectoryWriter(path);
    const messages: Message[] = [{ role: "system", content: "sys" }];
    for (let index = 0; index < 30; index++) step(messages, index);
    const exit: Message = { role: "exit", content: "", extra: { exit_status: "Submitted", submission: "" } };
    messages.push(exit);
    const extras = { instance_id: "a__b-1" };
    writer.save(trajectoryInfo(config, { cost: 1, apiCalls: 30 }, exit), messages, extras);
    await writer.flush();
    const timing = { started_at: 1.5, ended_at: 2.5, wall_time_s: 1.0 };
    addTrajectoryInfo(path, { swerun_timing: timing, mini_version: "9.9" });
    const info = { ...trajectoryInfo(config, { cost: 1, apiCalls: 30 }, exit), mini_version: "9.9" };
    const expected = {
      info: { ...info, swerun_timing: timing },
      messages,
      trajectory_format: "mini-swe-agent-1.1",
    };
    expect(readFileSync(path, "utf8")).toBe(`${jsonWithFloats({ ...expected, ...extras })}\n`);
    // Another layout (one line): read and written whole.
    writeFileSync(path, JSON.stringify({ info: { a: 1 }, messages: [] }));
    addTrajectoryInfo(path, { b: 2 });
    expect(readJson(path)).toEqual({ info: { a: 1, b: 2 }, messages: [] });
  });
});
