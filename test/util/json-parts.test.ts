import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readJsonInParts } from "../../src/util/json-parts.js";
import { tempDir } from "../helpers/tmp.js";

const MESSAGES = new Set(["messages"]);

/** The file's parts as read in chunks of `chunk` bytes, beside JSON.parse of its whole text. */
function bothWays(text: string, chunk: number) {
  const path = join(tempDir(), "t.json");
  writeFileSync(path, text);
  return { parts: readJsonInParts(path, MESSAGES, chunk), whole: JSON.parse(text) };
}

const trajectory = {
  info: { config: { agent: { step_limit: 0 } }, model_stats: { instance_cost: 1.5, api_calls: 3 } },
  messages: [
    { role: "system", content: 'quotes " and \\\\" and \\\\ at the end\\\\' },
    { role: "user", content: "é ü 中文 🚀 {[ ]} , : \n\t\u0000" },
    { role: "assistant", content: "x".repeat(3000), extra: { actions: [{ command: "ls" }], cost: 0 } },
    { role: "exit", content: "", extra: { exit_status: "Submitted", submission: "" } },
  ],
  trajectory_format: "mini-swe-agent-1.1",
  instance_id: "a__b-1",
  n: -1.5e-7,
  flags: [true, false, null],
  empty: {},
  none: [],
};

describe("readJsonInParts", () => {
  it("gives what JSON.parse gives, whatever the chunks cut (in a string, an escape, a character)", () => {
    for (const text of [
      JSON.stringify(trajectory, null, 2),
      JSON.stringify(trajectory),
      ` \n${JSON.stringify(trajectory)}\n\n`,
    ]) {
      for (const chunk of [1, 2, 3, 7, 64, 1000, 1 << 20]) {
        const { parts, whole } = bothWays(text, chunk);
        expect(parts).toEqual(whole);
        expect(Object.keys(parts ?? {})).toEqual(Object.keys(whole));
      }
    }
  });

  it("keeps JSON.parse's own __proto__ key and the last of repeated keys", () => {
    const { parts, whole } = bothWays('{"__proto__": {"x": 1}, "a": 1, "a": 2, "messages": []}', 3);
    expect(parts).toEqual(whole);
    expect(Object.getPrototypeOf(parts)).toBe(Object.prototype);
    expect(Object.hasOwn(parts as object, "__proto__")).toBe(true);
    expect(parts?.a).toBe(2);
  });

  it("leaves what is not a JSON object to the caller (undefined), as JSON.parse would refuse it or read it otherwise", () => {
    const path = join(tempDir(), "bad.json");
    for (const text of [
      "[1, 2]",
      '"text"',
      "",
      '{"a": 1',
      '{"a": 1,}',
      '{"a" 1}',
      '{"a": 1} x',
      '{"messages": [1, 2,]}',
      '{"messages": [1 2]}',
      '{"a": tru}',
      '{"a": "open}',
      '\uFEFF{"a": 1}',
    ]) {
      writeFileSync(path, text);
      expect(readJsonInParts(path, MESSAGES, 2), text).toBeUndefined();
    }
    expect(readJsonInParts(join(tempDir(), "missing.json"), MESSAGES)).toBeUndefined();
  });
});
