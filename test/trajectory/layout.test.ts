import { describe, expect, it } from "vitest";
import type { Message } from "../../src/messages.js";
import {
  changedFields,
  encodeClosing,
  encodeHead,
  fileBatches,
  type Layout,
  newTail,
  padded,
  type Saved,
} from "../../src/trajectory/layout.js";

const saved = (messages: Message[], extras: Record<string, unknown> = {}): Saved => ({
  info: { exit_status: null, submission: null } as unknown as Saved["info"],
  messages,
  count: messages.length,
  extras,
});

/** The whole file of a save, as TrajectoryWriter writes it, and where its parts sit. */
function whole(
  fields: Array<[string, string]>,
  save: Saved,
  final: boolean,
): { text: string; layout: Layout } {
  const { head, slots } = encodeHead(fields, final);
  const closing = encodeClosing(save.extras);
  const text = Buffer.concat([...fileBatches(head, save, closing, (b) => b)].flat()).toString("utf8");
  const size = Buffer.byteLength(text);
  return {
    text,
    layout: {
      slots,
      count: save.count,
      messagesStart: Buffer.byteLength(head),
      messagesEnd: size - Buffer.byteLength(closing),
      closing,
      size,
      secrets: 0,
    },
  };
}

describe("the trajectory writer's layout", () => {
  it("puts each info field in a slot with spare room during the run, none in the last save; the file is JSON", () => {
    const fields: Array<[string, string]> = [
      ["model_stats", '{"instance_cost": 0.5}'],
      ["exit_status", "null"],
    ];
    const messages: Message[] = [{ role: "system", content: "é" }];
    const running = whole(fields, saved(messages, { instance_id: "a" }), false);
    expect(JSON.parse(running.text)).toEqual({
      info: { model_stats: { instance_cost: 0.5 }, exit_status: null },
      messages,
      trajectory_format: "mini-swe-agent-1.1",
      instance_id: "a",
    });
    const bytes = Buffer.from(running.text, "utf8");
    for (const slot of running.layout.slots) {
      expect(bytes.subarray(slot.offset, slot.offset + slot.width).toString("utf8")).toBe(
        padded(slot.text, slot.width).toString("utf8"),
      );
      expect(slot.width).toBeGreaterThan(Buffer.byteLength(slot.text));
    }
    const final = whole(fields, saved(messages), true);
    for (const slot of final.layout.slots) expect(slot.width).toBe(Buffer.byteLength(slot.text));
  });

  it("patches only fields that changed and fit their slot", () => {
    const { slots } = encodeHead([["a", "1"]], false);
    expect(changedFields(slots, [["a", "1"]])).toEqual([]);
    expect(changedFields(slots, [["a", "2"]])?.map((patch) => patch.text)).toEqual(["2"]);
    expect(changedFields(slots, [["a", "x".repeat(100)]])).toBeUndefined();
    expect(changedFields(slots, [["b", "1"]])).toBeUndefined();
  });

  it("writes new messages over the old closing lines, padding a shorter closing so no old byte is left", () => {
    const first: Message[] = [{ role: "system", content: "s" }];
    const before = whole([["a", "1"]], saved(first, { note: "a long note" }), false);
    expect(newTail(before.layout, saved(first, { note: "a long note" }))).toBeUndefined();
    const tail = newTail(before.layout, saved(first, { note: "" }));
    if (!tail) throw new Error("expected a tail");
    const bytes = Buffer.from(before.text, "utf8");
    const after = Buffer.concat([bytes.subarray(0, before.layout.messagesEnd), ...tail.buffers]);
    expect(after.length).toBe(before.layout.size);
    expect(JSON.parse(after.toString("utf8")).note).toBe("");
    const more: Message[] = [...first, { role: "user", content: "u" }];
    const grown = newTail(before.layout, saved(more, { note: "a long note" }));
    if (!grown) throw new Error("expected a tail");
    const text = Buffer.concat([bytes.subarray(0, before.layout.messagesEnd), ...grown.buffers]).toString(
      "utf8",
    );
    expect(JSON.parse(text).messages).toEqual(more);
    expect(grown.size).toBe(Buffer.byteLength(text));
  });
});
