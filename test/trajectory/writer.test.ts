import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Message } from "../../src/messages.js";
import { trajectoryConfig, trajectoryInfo } from "../../src/trajectory/format.js";
import { journalPath } from "../../src/trajectory/journal.js";
import { loadTrajectory } from "../../src/trajectory/reader.js";
import { TrajectoryWriter } from "../../src/trajectory/writer.js";
import { FileWriteError } from "../../src/util/file-error.js";
import { jsonWithFloats } from "../../src/util/float-json.js";
import { registerSecret } from "../../src/util/secrets.js";
import { killAt } from "../helpers/cli.js";
import { describeSmallDisk, mountSmallDisk, type SmallDisk } from "../helpers/small-disk.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

const config = trajectoryConfig(
  { step_limit: 0, system_template: "x".repeat(2000) },
  { model: { model_name: "m" }, model_type: "t" },
  { environment: { cwd: "/" }, environment_type: "e" },
);

/** A growing trajectory: `steps` steps of an assistant message (cost 0.0123 each) and a 5 KB observation. */
function step(messages: Message[], index: number): { cost: number } {
  messages.push({ role: "assistant", content: `step ${index} é`, extra: { cost: 0.0123 } });
  messages.push({ role: "user", content: `output ${index}\n${'ab"c\\ '.repeat(800)}` });
  return { cost: 0.0123 * (index + 1) };
}

/**
 * A `swerun run` (the demo config) of five scripted steps writing the trajectory `out`, killed by SIGKILL at
 * `point`. Each step sleeps, so the first save's whole-file write is done before the next save comes (saves that
 * arrive during a write coalesce, and the last one is a whole-file write again).
 */
function killedRun(dir: string, out: string, point: string) {
  const outputs = Array.from({ length: 5 }, (_, i) => ({
    role: "assistant",
    content: `step ${i}`,
    extra: { actions: [{ command: `sleep 0.3; echo step ${i}` }], cost: 0.5 },
  }));
  const path = join(dir, "c.json");
  writeFileSync(
    path,
    JSON.stringify({ model: { model_class: "deterministic", outputs }, environment: { cwd: dir } }),
  );
  return killAt(point, ["run", "-c", "demo", "-c", path, "-t", "t", "-o", out]);
}

/** The roles of a trajectory's messages after `steps` steps. */
const roles = (steps: number) => ["system", "user", ...Array(steps).fill(["assistant", "user"]).flat()];

describe("TrajectoryWriter", () => {
  it("keeps the file a complete trajectory after every save, in bytes linear in its final size", async () => {
    const path = join(tempDir(), "t.traj.json");
    const writer = new TrajectoryWriter(path);
    const messages: Message[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "task" },
    ];
    const extras = { instance_id: "a__b-1" };
    for (let index = 0; index < 200; index++) {
      const { cost } = step(messages, index);
      writer.save(trajectoryInfo(config, { cost, apiCalls: index + 1 }, undefined), messages, extras);
      if (index % 7 === 0) {
        await writer.flush();
        const onDisk = readJson(path);
        expect(onDisk.messages).toEqual(messages);
        expect(onDisk.info.model_stats).toEqual({ instance_cost: cost, api_calls: index + 1 });
        expect(onDisk.instance_id).toBe("a__b-1");
      }
    }
    const exit: Message = {
      role: "exit",
      content: "patch",
      extra: { exit_status: "Submitted", submission: "p" },
    };
    messages.push(exit);
    writer.save(trajectoryInfo(config, { cost: 1, apiCalls: 200 }, exit), messages, extras);
    await writer.flush();
    const final = readFileSync(path, "utf8");
    // The last save writes the file as mini-swe-agent's writer lays it out (no spare room left anywhere).
    expect(final).toBe(
      `${jsonWithFloats({ info: readJson(path).info, messages, trajectory_format: "mini-swe-agent-1.1", ...extras })}\n`,
    );
    // Before: the whole file after every save (~100x the final size over 200 steps).
    expect(writer.bytesWritten).toBeLessThan(3 * statSync(path).size);
  });

  it("writes the whole file again when it was removed or replaced during the run", async () => {
    const dir = tempDir();
    const path = join(dir, "t.traj.json");
    const writer = new TrajectoryWriter(path);
    const messages: Message[] = [{ role: "system", content: "sys" }];
    const save = () => writer.save(trajectoryInfo(config, { cost: 0, apiCalls: 0 }, undefined), messages);
    save();
    await writer.flush();
    step(messages, 0);
    rmSync(path);
    save();
    await writer.flush();
    expect(readJson(path).messages).toEqual(messages);
    writeFileSync(join(dir, "other"), "{}");
    renameSync(join(dir, "other"), path);
    step(messages, 1);
    save();
    await writer.flush();
    expect(readJson(path).messages).toEqual(messages);
    // An extra whose text gets shorter leaves no old byte behind.
    writer.save(trajectoryInfo(config, { cost: 0, apiCalls: 0 }, undefined), messages, {
      note: "long ".repeat(50),
    });
    writer.save(trajectoryInfo(config, { cost: 0, apiCalls: 0 }, undefined), messages, { note: "short" });
    await writer.flush();
    expect(readJson(path).note).toBe("short");
  });

  it("a kill after a step's messages were appended, before its stats were, leaves every step in valid JSON", async () => {
    const dir = tempDir();
    const out = join(dir, "k.traj.json");
    const result = await killedRun(dir, out, "trajectory-appended");
    expect(result.signal).toBe("SIGKILL");
    const trajectory = readJson(out);
    const steps = (trajectory.messages.length - 2) / 2;
    expect(steps).toBeGreaterThanOrEqual(2);
    expect(trajectory.messages.map((m: Message) => m.role)).toEqual(roles(steps));
    expect(trajectory.messages.at(-1).content).toMatch(new RegExp(`step ${steps - 1}`));
    // The stats are those of the save before: the kill came between the messages and the stats.
    expect(trajectory.info.model_stats.api_calls).toBeLessThan(steps);
  });

  it("holds the exit message's save in place until complete writes the whole file once, with the extra info", async () => {
    const path = join(tempDir(), "h.traj.json");
    const writer = new TrajectoryWriter(path, { holdLast: true });
    const messages: Message[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "task" },
    ];
    for (let index = 0; index < 100; index++) {
      const { cost } = step(messages, index);
      writer.save(trajectoryInfo(config, { cost, apiCalls: index + 1 }, undefined), messages);
      await writer.flush();
    }
    // A submission longer than its field's spare room: the held save leaves \`info\` as it was.
    const patch = "diff --git a/x b/x\n".repeat(5);
    const exit: Message = {
      role: "exit",
      content: patch,
      extra: { exit_status: "Submitted", submission: patch },
    };
    messages.push(exit);
    const info = trajectoryInfo(config, { cost: 2, apiCalls: 100 }, exit);
    writer.save(info, messages);
    await writer.flush();
    // Held: every message is on disk (written in place), `info` as the save before left it.
    const held = readJson(path);
    expect(held.messages).toEqual(messages);
    expect(held.info.exit_status).toBe("");
    const timing = { started_at: 1.5, ended_at: 2.5, wall_time_s: 1.0 };
    await writer.complete({ swerun_timing: timing });
    const final = readFileSync(path, "utf8");
    expect(final).toBe(
      `${jsonWithFloats({ info: { ...info, swerun_timing: timing }, messages, trajectory_format: "mini-swe-agent-1.1" })}\n`,
    );
    expect(existsSync(journalPath(path))).toBe(false);
    // The first save, every step's new bytes once (plus its small undo record), the last save: about 2x.
    expect(writer.bytesWritten).toBeLessThan(2.2 * statSync(path).size);
  });

  it("starts a save's write after the caller's turn (its next request sent first), and at once on flush", async () => {
    const path = join(tempDir(), "d.traj.json");
    const writer = new TrajectoryWriter(path);
    const messages: Message[] = [{ role: "system", content: "sys" }];
    const save = () => writer.save(trajectoryInfo(config, { cost: 0, apiCalls: 0 }, undefined), messages);
    save();
    await Promise.resolve();
    expect(existsSync(path)).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    await writer.flush();
    expect(readJson(path).messages).toEqual(messages);
    // In place: the step's messages are on disk once the event loop has turned, or when flush is called.
    step(messages, 0);
    save();
    expect(readJson(path).messages).toHaveLength(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(readJson(path).messages).toEqual(messages);
    step(messages, 1);
    save();
    await writer.flush();
    expect(readJson(path).messages).toEqual(messages);
  });

  it("writes the whole file again, every message redacted, after a secret is registered during the run", async () => {
    const path = join(tempDir(), "s.traj.json");
    const writer = new TrajectoryWriter(path, { holdLast: true });
    const secret = `sk-late-${process.pid}-registered`;
    const messages: Message[] = [
      { role: "system", content: "sys" },
      { role: "user", content: `the key is ${secret}` },
    ];
    const save = (apiCalls: number) =>
      writer.save(trajectoryInfo(config, { cost: 0, apiCalls }, undefined), messages);
    for (let index = 0; index < 3; index++) {
      step(messages, index);
      save(index + 1);
      await writer.flush();
    }
    expect(readFileSync(path, "utf8")).toContain(secret);
    registerSecret(secret);
    step(messages, 3);
    save(4);
    await writer.flush();
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain(secret);
    expect(readJson(path).messages[1].content).toBe("the key is [REDACTED]");
    await writer.complete({ note: 1 });
    expect(readFileSync(path, "utf8")).not.toContain(secret);
    expect(readJson(path).messages).toHaveLength(messages.length);
  });

  it("a kill inside a step's in-place write leaves a cut file that the undo journal repairs, every earlier step whole", async () => {
    const dir = tempDir();
    const out = join(dir, "cut.traj.json");
    const result = await killedRun(dir, out, "trajectory-tail-cut");
    expect(result.signal).toBe("SIGKILL");
    // Killed with half of the step written over the old closing lines: the file does not parse.
    expect(() => readJson(out)).toThrow();
    expect(existsSync(journalPath(out))).toBe(true);
    const loaded = loadTrajectory(out);
    const steps = (loaded.messages.length - 2) / 2;
    expect(steps).toBeGreaterThanOrEqual(1);
    expect(loaded.messages.map((m) => m.role)).toEqual(roles(steps));
    expect(String(loaded.messages.at(-1)?.content)).toMatch(new RegExp(`step ${steps - 1}`));
    // Repaired on disk (for any reader: mini-swe-agent's, a watcher), the journal gone, the stats of that save.
    expect(readJson(out).messages).toEqual(loaded.messages);
    expect(readJson(out).info.model_stats.api_calls).toBe(steps);
    expect(existsSync(journalPath(out))).toBe(false);
  });
});

describeSmallDisk("TrajectoryWriter on a full disk (a small tmpfs)", () => {
  /** Saves steps until one fails to be written; returns the messages of the last save that was. */
  async function saveUntilFull(writer: TrajectoryWriter, disk: SmallDisk) {
    const messages: Message[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "task" },
    ];
    let onDisk: Message[] = [];
    for (let index = 0; index < 100; index++) {
      const { cost } = step(messages, index);
      writer.save(trajectoryInfo(config, { cost, apiCalls: index + 1 }, undefined), messages);
      if (index === 2) disk.fill(0);
      try {
        await writer.flush();
      } catch (error) {
        return { error, onDisk, messages };
      }
      onDisk = structuredClone(messages);
    }
    throw new Error("the disk never filled up");
  }

  it("a step that does not fit leaves the file as the save before, whole, without its journal; the writer stops, once", async () => {
    const disk = mountSmallDisk(256 * 1024);
    try {
      const path = join(disk.dir, "t.traj.json");
      const failures: unknown[] = [];
      const writer = new TrajectoryWriter(path, { onFailure: (error) => failures.push(error) });
      const { error, onDisk, messages } = await saveUntilFull(writer, disk);
      expect(error).toBeInstanceOf(FileWriteError);
      expect(error).toMatchObject({ path, code: "ENOSPC" });
      expect((error as Error).message).toBe(`could not write ${path}: no space left on device (ENOSPC)`);
      expect(onDisk.length).toBeGreaterThan(2);
      expect(readJson(path).messages).toEqual(onDisk);
      expect(existsSync(journalPath(path))).toBe(false);
      expect(readdirSync(disk.dir).sort()).toEqual(["filler", "t.traj.json"]);
      expect(writer.failed).toBe(error);
      expect(writer.failure).toEqual({ path, error });
      expect(failures).toEqual([error]);
      // Nothing more is written, even once there is room again.
      disk.unfill();
      writer.save(trajectoryInfo(config, { cost: 9, apiCalls: 99 }, undefined), messages);
      await writer.complete({ swerun_timing: {} });
      expect(readJson(path).messages).toEqual(onDisk);
      expect(failures).toHaveLength(1);
    } finally {
      disk.remove();
    }
  });

  it("with a fallback path, the file stays the save before and the fallback gets every later save", async () => {
    const disk = mountSmallDisk(256 * 1024);
    try {
      const path = join(disk.dir, "t.traj.json");
      const fallback = join(tempDir(), "fallback.traj.json");
      const writer = new TrajectoryWriter(path, { fallback });
      const messages: Message[] = [{ role: "system", content: "sys" }];
      let before: Message[] = [];
      for (let index = 0; index < 40; index++) {
        step(messages, index);
        writer.save(trajectoryInfo(config, { cost: 0, apiCalls: index }, undefined), messages);
        if (index === 2) disk.fill(0);
        await writer.flush();
        if (writer.path === path) before = structuredClone(messages);
      }
      expect(writer.path).toBe(fallback);
      expect(writer.failure?.path).toBe(path);
      expect(writer.failed).toBeUndefined();
      expect(readJson(path).messages).toEqual(before);
      expect(readJson(fallback).messages).toEqual(messages);
    } finally {
      disk.remove();
    }
  });

  it("a first save that does not fit leaves the file that was there as it was, and no temp file", async () => {
    const disk = mountSmallDisk(64 * 1024);
    try {
      const path = join(disk.dir, "t.traj.json");
      writeFileSync(path, '{"info": {}, "messages": []}\n');
      disk.fill(0);
      const writer = new TrajectoryWriter(path);
      const messages: Message[] = [{ role: "system", content: "sys" }];
      step(messages, 0);
      writer.save(trajectoryInfo(config, { cost: 0, apiCalls: 1 }, undefined), messages);
      await expect(writer.flush()).rejects.toThrow(
        `could not write ${path}: no space left on device (ENOSPC)`,
      );
      expect(readFileSync(path, "utf8")).toBe('{"info": {}, "messages": []}\n');
      expect(readdirSync(disk.dir).sort()).toEqual(["filler", "t.traj.json"]);
    } finally {
      disk.remove();
    }
  });
});
