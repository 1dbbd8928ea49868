import { existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import type { Message } from "../../src/messages.js";
import { trajectoryConfig, trajectoryInfo } from "../../src/trajectory/format.js";
import { journalPath } from "../../src/trajectory/journal.js";
import { EXPECTED_TRAJECTORY, loadTrajectory, readTrajectoryInfo } from "../../src/trajectory/reader.js";
import { TrajectoryWriter } from "../../src/trajectory/writer.js";
import { packageRoot } from "../../src/util/package-root.js";
import { tempDir } from "../helpers/tmp.js";

const FIXTURES = join(packageRoot(), "test", "fixtures", "replay");

function file(content: string): string {
  const path = join(tempDir(), "x.traj.json");
  writeFileSync(path, content);
  return path;
}

function loadError(path: string): string {
  try {
    loadTrajectory(path);
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return (error as Error).message;
  }
  throw new Error("expected an error");
}

describe("loadTrajectory", () => {
  it("reads a mini-swe-agent-1.1 trajectory with its info and top-level extras", () => {
    const path = file(
      JSON.stringify({
        info: { submission: "x" },
        messages: [{ role: "system", content: "s" }],
        trajectory_format: "mini-swe-agent-1.1",
        instance_id: "a__b-1",
      }),
    );
    const loaded = loadTrajectory(path);
    expect(loaded).toMatchObject({
      kind: "mini-swe-agent-1.1",
      info: { submission: "x" },
      extras: { instance_id: "a__b-1" },
    });
    expect(loaded.messages).toHaveLength(1);
  });

  it("reads mini-swe-agent's tool-call trajectory and the bare message list of older versions", () => {
    const toolcall = loadTrajectory(join(FIXTURES, "mini-swe-agent-toolcall.traj.json"));
    expect(toolcall.kind).toBe("mini-swe-agent-1.1");
    expect(toolcall.messages.at(-1)?.role).toBe("exit");
    const list = loadTrajectory(join(FIXTURES, "bare-list.traj.json"));
    expect(list).toMatchObject({ kind: "message-list", info: {}, extras: {} });
    expect(list.messages[0]?.role).toBe("system");
  });

  it("reads mini-swe-agent 1.x's format", () => {
    const path = file(
      JSON.stringify({
        info: {},
        messages: [{ role: "user", content: "u" }],
        trajectory_format: "mini-swe-agent-1",
      }),
    );
    expect(loadTrajectory(path).kind).toBe("mini-swe-agent-1");
  });

  it("names what it expected when a file is none of the supported shapes", () => {
    const cases: Array<[string, string]> = [
      ["{not json", "not JSON ("],
      ['"a string"', "a JSON string"],
      ["null", "a JSON null"],
      [JSON.stringify({ info: {}, messages: [] }), "no trajectory_format"],
      [JSON.stringify({ trajectory: [], history: [] }), "no trajectory_format"],
      [
        JSON.stringify({ messages: [], trajectory_format: "swe-agent-2" }),
        'trajectory_format "swe-agent-2" is not supported',
      ],
      [JSON.stringify({ messages: {}, trajectory_format: "mini-swe-agent-1.1" }), '"messages" is not a list'],
      [
        JSON.stringify({ info: [], messages: [], trajectory_format: "mini-swe-agent-1.1" }),
        '"info" is not an object',
      ],
      [JSON.stringify([{ role: "system", content: "" }, { text: "hi" }]), "messages[1] is not a message"],
      [JSON.stringify([{ role: "robot", content: "" }]), "messages[0] is not a message"],
      [
        JSON.stringify([
          { role: "system", content: "" },
          { role: "exit", content: "", extra: { exit_status: 1 } },
        ]),
        "messages[1] is an exit message without extra.exit_status and extra.submission (strings)",
      ],
    ];
    for (const [content, problem] of cases) {
      const path = file(content);
      expect(loadError(path)).toContain(`${path}: ${problem}`);
      expect(loadError(path)).toContain(`expected ${EXPECTED_TRAJECTORY}`);
    }
  });

  it("says when there is nothing to replay or no file", () => {
    expect(loadError(file("[]"))).toMatch(/holds no messages: nothing to replay$/);
    const missing = join(tempDir(), "missing.traj.json");
    expect(loadError(missing)).toBe(`${missing}: cannot read the trajectory: no such file`);
    const dir = join(tempDir(), "dir.traj.json");
    mkdirSync(dir);
    expect(loadError(dir)).toBe(`${dir}: cannot read the trajectory: is a directory`);
  });

  // The second size is over 1 MiB: such a file is read in parts (util/json-parts.ts), and whole when that fails.
  it.each([3000, 250_000])(
    "repairs a trajectory cut inside an in-place write from its undo journal, and only then (outputs of %i bytes)",
    async (size) => {
      const path = join(tempDir(), "cut.traj.json");
      const writer = new TrajectoryWriter(path);
      const config = trajectoryConfig(
        {},
        { model: {}, model_type: "m" },
        { environment: {}, environment_type: "e" },
      );
      const messages: Message[] = [{ role: "system", content: "s" }];
      for (let index = 0; index < 3; index++) {
        messages.push({ role: "user", content: `output ${index} ${'x"é\n'.repeat(size / 4)}` });
        writer.save(trajectoryInfo(config, { cost: index, apiCalls: index }, undefined), messages);
        await writer.flush();
      }
      const whole = readFileSync(path);
      // The next step's write stopped after its first bytes: the old closing lines half overwritten.
      messages.push({ role: "user", content: "output 3" });
      writer.save(trajectoryInfo(config, { cost: 3, apiCalls: 3 }, undefined), messages);
      await writer.flush();
      // The old file with the first 30 bytes of the new write over its closing lines (from where its messages end).
      const closing = Buffer.byteLength('\n  ],\n  "trajectory_format": "mini-swe-agent-1.1"\n}\n');
      const messagesEnd = whole.length - closing;
      const cut = Buffer.from(whole);
      readFileSync(path)
        .subarray(messagesEnd, messagesEnd + 30)
        .copy(cut, messagesEnd);
      writeFileSync(path, cut);
      expect(() => JSON.parse(readFileSync(path, "utf8"))).toThrow();
      const loaded = loadTrajectory(path);
      expect(loaded.messages).toEqual(messages.slice(0, 4));
      expect(loaded.info.model_stats).toEqual({ instance_cost: 2, api_calls: 2 });
      expect(readFileSync(path).equals(whole)).toBe(true);
      expect(existsSync(journalPath(path))).toBe(false);
      // A journal that does not give a file that parses (here: the file is shorter than it says) changes nothing.
      writeFileSync(journalPath(path), `${JSON.stringify({ size: whole.length, restore: [] })}\n`);
      truncateSync(path, 100);
      expect(loadError(path)).toMatch(/not JSON/);
      expect(readFileSync(path).length).toBe(100);
    },
  );
});

describe("loadTrajectory of a file over 1 MiB (read in parts)", () => {
  it("reads what the whole file's JSON holds", () => {
    const messages = Array.from({ length: 40 }, (_, index) => ({
      role: index === 0 ? "system" : index % 2 ? "assistant" : "user",
      content: `step ${index} ${'a"b\\c é 🚀\n'.repeat(4000)}`,
      extra: { index, cost: 0.5 },
    }));
    const data = {
      info: { model_stats: { api_calls: 3 } },
      messages,
      trajectory_format: "mini-swe-agent-1.1",
      instance_id: "x",
    };
    const path = file(JSON.stringify(data, null, 2));
    expect(readFileSync(path).length).toBeGreaterThan(1 << 20);
    const loaded = loadTrajectory(path);
    expect(loaded.messages).toEqual(messages);
    expect(loaded.info).toEqual(data.info);
    expect(loaded.extras).toEqual({ instance_id: "x" });
    // Not JSON: the error of a whole read, naming the file.
    writeFileSync(path, `${JSON.stringify(data).slice(0, -1)},}`);
    expect(loadError(path)).toMatch(/not JSON/);
  });
});

describe("readTrajectoryInfo (the outcome alone)", () => {
  it("gives a trajectory's info unchecked; {} without one; undefined for no file, not JSON, or null", () => {
    const info = { exit_status: "Submitted", submission: "diff", model_stats: { instance_cost: 0.25 } };
    expect(readTrajectoryInfo(file(JSON.stringify({ info, messages: [] })))).toEqual(info);
    expect(readTrajectoryInfo(file(JSON.stringify([{ role: "user", content: "x" }])))).toEqual({});
    expect(readTrajectoryInfo(file(JSON.stringify({ info: "not an object" })))).toEqual({});
    expect(readTrajectoryInfo(file(JSON.stringify(5)))).toEqual({});
    expect(readTrajectoryInfo(file("null"))).toBeUndefined();
    expect(readTrajectoryInfo(file('{"info": {"exit_status": "Subm'))).toBeUndefined();
    expect(readTrajectoryInfo(join(tempDir(), "none.traj.json"))).toBeUndefined();
  });
});
