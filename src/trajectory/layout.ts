import type { Message } from "../messages.js";
import { jsonWithFloats } from "../util/float-json.js";
import { redact } from "../util/secrets.js";
import { TRAJECTORY_FORMAT, type TrajectoryInfo } from "./format.js";

// The layout TrajectoryWriter writes a trajectory in: `info`'s fields each in a slot with spare room, one
// message after another, then the closing lines; and the bytes of its whole file and of an in-place update.

export const indent = (json: string, pad: string) => json.replaceAll("\n", `\n${pad}`);

/** Spare bytes after each `info` field during a run, so a changed `model_stats` is rewritten in place. */
const FIELD_SLACK = 32;

/** Where an `info` field's text sits in the file, and how many bytes it may take there. */
export interface Slot {
  key: string;
  offset: number;
  width: number;
  text: string;
}

/** Where the parts of the file on disk sit, as far as in-place updates need to know. */
export interface Layout {
  slots: Slot[];
  /** Messages in the file, the offset where the first one starts, and where the last one ends (the closing starts). */
  count: number;
  messagesStart: number;
  messagesEnd: number;
  /** The secrets' version (`secretsVersion`) the messages in the file were redacted at. */
  secrets: number;
  closing: string;
  size: number;
}

/** One save: the trajectory as the run handed it over. */
export interface Saved {
  info: TrajectoryInfo;
  messages: Message[];
  count: number;
  extras: Record<string, unknown>;
  /** Written as the last save (whole, no spare room), whatever its last message is. */
  final?: boolean;
}

/**
 * The head of the file up to the first message: `info`'s fields, each followed by spare room during the run
 * (not `final`), and the slot each field's text sits in.
 */
export function encodeHead(fields: Array<[string, string]>, final: boolean): { head: string; slots: Slot[] } {
  const slots: Slot[] = [];
  let head = `{\n  "info": {\n`;
  for (const [index, [key, text]] of fields.entries()) {
    const prefix = `${index === 0 ? "" : ",\n"}    ${JSON.stringify(key)}: `;
    head += prefix;
    const offset = Buffer.byteLength(head);
    const width = Buffer.byteLength(text) + (final ? 0 : FIELD_SLACK);
    slots.push({ key, offset, width, text });
    head += `${text}${" ".repeat(final ? 0 : FIELD_SLACK)}`;
  }
  head += `\n  },\n  "messages": [\n`;
  return { head, slots };
}

/** A changed `info` field and the slot its new text goes to. */
export interface Patch {
  slot: Slot;
  text: string;
}

/** The fields that changed, each with its slot; undefined when one does not fit its slot (or keys differ). */
export function changedFields(slots: Slot[], fields: Array<[string, string]>): Patch[] | undefined {
  const patches: Patch[] = [];
  for (const [index, [key, text]] of fields.entries()) {
    const slot = slots[index] as Slot;
    if (slot.key !== key) return undefined;
    // Most fields are as before (the config's text is the same string each save): no bytes to count.
    if (text === slot.text) continue;
    if (Buffer.byteLength(text) > slot.width) return undefined;
    patches.push({ slot, text });
  }
  return patches;
}

/** A field's text padded with spaces to its slot's width. */
export function padded(text: string, width: number): Buffer {
  const bytes = Buffer.from(text, "utf8");
  return Buffer.concat([bytes, Buffer.alloc(width - bytes.length, " ")]);
}

/**
 * The new messages and the closing lines, written over the old closing lines; undefined when neither changed.
 * A shorter closing than before is padded so no old byte is left after the final newline.
 */
export function newTail(
  disk: Layout,
  saved: Saved,
): { buffers: Buffer[]; end: number; closing: string; size: number } | undefined {
  const added: Buffer[] = [];
  for (let index = disk.count; index < saved.count; index++) {
    added.push(Buffer.from(encodeMessage(saved.messages[index] as Message, index), "utf8"));
  }
  let closing = encodeClosing(saved.extras);
  if (added.length === 0 && closing === disk.closing) return undefined;
  const end = disk.messagesEnd + added.reduce((sum, buffer) => sum + buffer.length, 0);
  const short = disk.size - (end + Buffer.byteLength(closing));
  if (short > 0) closing = `${closing.slice(0, -2)}${" ".repeat(short)}}\n`;
  const last = Buffer.from(closing, "utf8");
  return { buffers: [...added, last], end, closing, size: end + last.length };
}

/** The first messages' bytes as a file holds them: `count` messages, read in chunks. */
export interface MessagesOnDisk {
  count: number;
  chunks: Iterable<Buffer>;
}

/**
 * The whole file's bytes, each batch when it is asked for (the caller writes one before it asks for the next):
 * the first messages as `onDisk` gives them, the others encoded about a megabyte at a time.
 */
export function* fileBatches(
  head: string,
  saved: Saved,
  closing: string,
  count: (buffer: Buffer) => Buffer,
  onDisk?: MessagesOnDisk,
): Generator<Buffer[]> {
  let batch: Buffer[] = [count(Buffer.from(head, "utf8"))];
  for (const chunk of onDisk?.chunks ?? []) {
    batch.push(count(chunk));
    yield batch;
    batch = [];
  }
  let bytes = 0;
  for (let index = onDisk?.count ?? 0; index < saved.count; index++) {
    const buffer = count(Buffer.from(encodeMessage(saved.messages[index] as Message, index), "utf8"));
    batch.push(buffer);
    bytes += buffer.length;
    if (bytes >= 1 << 20) {
      yield batch;
      batch = [];
      bytes = 0;
    }
  }
  batch.push(count(Buffer.from(closing, "utf8")));
  yield batch;
}

function encodeMessage(message: Message, index: number): string {
  return redact(`${index === 0 ? "" : ",\n"}    ${indent(jsonWithFloats(message), "    ")}`);
}

export function encodeClosing(extras: Record<string, unknown>): string {
  let closing = `\n  ],\n  "trajectory_format": "${TRAJECTORY_FORMAT}"`;
  for (const [key, value] of Object.entries(extras)) {
    closing += `,\n  ${JSON.stringify(key)}: ${redact(indent(jsonWithFloats(value), "  "))}`;
  }
  return `${closing}\n}\n`;
}
