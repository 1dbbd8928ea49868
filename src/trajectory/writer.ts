import { closeSync, constants, openSync, readFileSync, readSync, writeSync } from "node:fs";
import type { Message } from "../messages.js";
import { writeFileAtomic, writeFileAtomicBatches, writeFileAtomicWith } from "../util/atomic-write.js";
import { chaosArmed, chaosPoint } from "../util/chaos.js";
import { type FdFile, open, rm, skipBytes } from "../util/fd-file.js";
import { type FileWriteError, fileWriteError } from "../util/file-error.js";
import { jsonWithFloats } from "../util/float-json.js";
import { redact } from "../util/secrets.js";
import { TRAJECTORY_FORMAT, type TrajectoryInfo } from "./format.js";
import { encodeUndo, journalPath, type UndoRecord } from "./journal.js";

/**
 * Adds keys to the `info` of a trajectory file already written (after its run ended: e.g. the run's timing),
 * atomically, in the writer's layout. Keys already there are replaced. A file in the writer's layout has its
 * head (`info`) read, changed and written, and the rest copied as it is, in chunks: a long trajectory is
 * never held in memory; any other file is read and written whole.
 */
export function addTrajectoryInfo(path: string, extra: Record<string, unknown>): void {
  const fd = openSync(path, "r");
  try {
    const end = infoEnd(fd);
    if (end === undefined) {
      addInfoWhole(path, extra);
      return;
    }
    const head = Buffer.alloc(end);
    readSync(fd, head, 0, end, 0);
    const { info } = JSON.parse(`${head.toString("utf8")}}`) as { info: Record<string, unknown> };
    Object.assign(info, extra);
    const text = Buffer.from(redact(`{\n  "info": ${indent(jsonWithFloats(info), "  ")}`), "utf8");
    writeFileAtomicWith(path, (out) => {
      writeAll(out, text);
      const chunk = Buffer.alloc(1 << 20);
      for (let position = end; ; ) {
        const read = readSync(fd, chunk, 0, chunk.length, position);
        if (read === 0) break;
        writeAll(out, chunk.subarray(0, read));
        position += read;
      }
    });
  } finally {
    closeSync(fd);
  }
}

/** Where `info` ends (after its `}`) in a file in the writer's layout; undefined for any other layout. */
function infoEnd(fd: number): number | undefined {
  const start = Buffer.from('{\n  "info": {\n');
  const marker = Buffer.from('\n  },\n  "messages": [');
  let text = Buffer.alloc(0);
  const chunk = Buffer.alloc(1 << 16);
  while (text.length < 1 << 24) {
    const read = readSync(fd, chunk, 0, chunk.length, text.length);
    if (read === 0) return undefined;
    text = Buffer.concat([text, chunk.subarray(0, read)]);
    if (text.length >= start.length && !text.subarray(0, start.length).equals(start)) return undefined;
    // JSON strings hold no raw newline, and deeper levels are indented further: this is `info`'s end.
    const index = text.indexOf(marker);
    if (index >= 0) return index + 4;
  }
  return undefined;
}

function writeAll(fd: number, buffer: Buffer): void {
  for (let offset = 0; offset < buffer.length; ) offset += writeSync(fd, buffer, offset);
}

function addInfoWhole(path: string, extra: Record<string, unknown>): void {
  const trajectory = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const info = trajectory.info;
  if (typeof info !== "object" || info === null || Array.isArray(info)) return;
  Object.assign(info, extra);
  writeFileAtomic(path, [redact(`${jsonWithFloats(trajectory)}\n`)]);
}

const indent = (json: string, pad: string) => json.replaceAll("\n", `\n${pad}`);

/** Spare bytes after each `info` field during a run, so a changed `model_stats` is rewritten in place. */
const FIELD_SLACK = 32;

/** Where an `info` field's text sits in the file, and how many bytes it may take there. */
interface Slot {
  key: string;
  offset: number;
  width: number;
  text: string;
}

/** What the file on disk holds, as far as in-place updates need to know. */
interface OnDisk {
  handle: FdFile;
  /** The undo journal (`journal.ts`), opened at the first in-place write. */
  journal?: FdFile;
  slots: Slot[];
  /** Messages in the file, and the offset where the last one ends (the closing starts). */
  count: number;
  messagesEnd: number;
  closing: string;
  size: number;
}

interface Saved {
  info: TrajectoryInfo;
  messages: Message[];
  count: number;
  extras: Record<string, unknown>;
  /** Written as the last save (whole, no spare room), whatever its last message is. */
  final?: boolean;
}

/**
 * Writes a trajectory as it grows, so that the file on disk is always a complete trajectory with every step
 * saved so far, in bytes linear in the trajectory's size. The first save and the last one (the exit message)
 * write the whole file atomically (temp file + rename); in between, a save writes in place only what changed:
 * the new messages with the closing lines over the old closing lines, then any `info` field that changed
 * (`model_stats`) over its old text, padded with spaces (each field has spare room; one that outgrows it
 * makes the next save a whole-file write). A kill between the two writes leaves valid JSON whose stats lag
 * one step. Before each in-place write, the bytes it replaces go to the undo journal
 * (`journal.ts`), so a kill inside a write (a file cut in its last step) is repaired to the save
 * before by `repairTrajectory`. The file on disk is checked before each in-place write: if it was removed or
 * replaced, the whole file is written again. Paths that are not regular files (`-`, devices, symlinks) get
 * whole-file writes.
 *
 * With `holdLast`, the exit message's save is written in place too (its messages; `info` as the save before
 * left it unless every changed field fits) and the whole-file write waits for `complete`, which adds the
 * caller's keys to `info` (the run's timing, known after its environment is torn down): one whole write at
 * the end, not two.
 *
 * Messages are append-only, so each is serialized (and redacted) once and nothing is kept in memory but
 * offsets. Writing runs in the thread pool while the next step goes on; saves that arrive while one is being
 * written coalesce into one write of the latest state. `flush` waits until the latest state is on disk.
 *
 * A write that fails (a full disk, a folder made read-only or removed) leaves the file as the save before
 * left it, complete: a whole-file write never got renamed into place, and a failed in-place write is undone
 * (the file cut back to its old size, the replaced bytes written back; if even that fails, the journal
 * repairs it on the next read). `failure` names the file and why (a FileWriteError). With a `fallback`
 * path, that save and every later one go there (`path` is then the fallback); without one, or when the
 * fallback fails too, the writer has `failed`: later saves are dropped, `onFailure` is called once (a batch
 * stops the run then: nothing it does could be recorded), and `flush` rejects with the failure.
 * The first whole-file write (over what was at `path`) and the last are fsynced before their rename when
 * they replace a file, so a file system that reports no space only at the fsync keeps the old file.
 */
export class TrajectoryWriter {
  #path: string;
  readonly #fallback: string | undefined;
  readonly #onFailure: ((error: FileWriteError) => void) | undefined;
  /** The first write that failed: its path and why (the writer may have moved on to its fallback since). */
  failure: { path: string; error: FileWriteError } | undefined;
  /** Why nothing more can be written (no fallback, or it failed too); later saves are dropped. */
  #failed: FileWriteError | undefined;
  /** Whether a whole-file write has been done (the first one replaces what was at the path: fsynced). */
  #wroteWhole = false;
  /** `info.config` does not change during a run: its encoding is kept for as long as the object is the same. */
  #config: { value: unknown; json: string } | undefined;
  #next: Saved | undefined;
  #last: Saved | undefined;
  #hold: boolean;
  #disk: OnDisk | undefined;
  #journaled = false;
  #writing: Promise<void> | undefined;
  #error: unknown;
  /** Bytes this writer has written (whole files, in-place updates, the undo journal), for the benchmarks. */
  bytesWritten = 0;

  constructor(
    path: string,
    options: { fallback?: string; holdLast?: boolean; onFailure?: (error: FileWriteError) => void } = {},
  ) {
    this.#path = path;
    this.#fallback = options.fallback;
    this.#hold = options.holdLast ?? false;
    this.#onFailure = options.onFailure;
  }

  /** Where the trajectory is written (the fallback after a failed write). */
  get path(): string {
    return this.#path;
  }

  /** Why nothing more can be written, once a write failed with no fallback left; undefined until then. */
  get failed(): FileWriteError | undefined {
    return this.#failed;
  }

  save(info: TrajectoryInfo, messages: Message[], extras: Record<string, unknown> = {}): void {
    if (this.#failed) return;
    this.#next = { info, messages, count: messages.length, extras };
    this.#last = this.#next;
    this.#writing ??= this.#drain();
  }

  /**
   * Ends the writer: the last save is written as the whole file with `extra` added to its `info` (keys there
   * are replaced). Without `extra`, nothing more is written (the file is about to be removed); files are closed.
   */
  async complete(extra?: Record<string, unknown>): Promise<void> {
    this.#hold = false;
    const last = this.#last;
    if (extra && last && !this.#failed) {
      this.#next = { ...last, info: { ...last.info, ...extra }, final: true };
      this.#writing ??= this.#drain();
    }
    try {
      await this.flush();
    } finally {
      await this.#forget();
    }
  }

  /** Resolves once everything saved so far is on disk; rejects if a write failed. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
    if (this.#error !== undefined) {
      const error = this.#error;
      this.#error = undefined;
      throw error;
    }
  }

  async #drain(): Promise<void> {
    try {
      while (this.#next) {
        const saved = this.#next;
        this.#next = undefined;
        try {
          await this.#write(saved);
        } catch (thrown) {
          const error = fileWriteError(this.#path, thrown);
          await this.#forget();
          this.failure ??= { path: this.#path, error };
          if (this.#fallback === undefined || this.#path === this.#fallback) throw error;
          this.#path = this.#fallback;
          await this.#write(saved);
        }
      }
    } catch (thrown) {
      const error = fileWriteError(this.#path, thrown);
      this.#error = error;
      this.#failed = error;
      this.#next = undefined;
      await this.#forget();
      this.#onFailure?.(error);
    } finally {
      this.#writing = undefined;
    }
  }

  async #write(saved: Saved): Promise<void> {
    const exit = saved.messages[saved.count - 1]?.role === "exit";
    const final = saved.final ?? (exit && !this.#hold);
    const fields = this.#fields(saved.info);
    if (!final && this.#disk && (await this.#inPlace(this.#disk, saved, fields, exit))) return;
    await this.#whole(saved, fields, final);
  }

  /**
   * Writes what changed since the last save into the file; false when a whole-file write is needed. A held
   * exit save (`heldExit`) leaves `info` as it was when a changed field does not fit its room.
   */
  async #inPlace(
    disk: OnDisk,
    saved: Saved,
    fields: Array<[string, string]>,
    heldExit: boolean,
  ): Promise<boolean> {
    if (saved.count < disk.count || fields.length !== disk.slots.length) return false;
    const patches = changedFields(disk.slots, fields) ?? (heldExit ? [] : undefined);
    if (!patches) return false;
    const stat = await disk.handle.stat().catch(() => undefined);
    if (!stat || stat.nlink === 0 || stat.size !== disk.size) return false;
    const tail = newTail(disk, saved);
    if (!tail && patches.length === 0) return true;
    const undo = await this.#journal(disk, tail !== undefined, patches);
    try {
      if (tail) {
        await this.#writeAt(disk.handle, tail.buffers, disk.messagesEnd, chaosArmed("trajectory-tail-cut"));
        disk.count = saved.count;
        disk.messagesEnd = tail.end;
        disk.closing = tail.closing;
        disk.size = tail.size;
        chaosPoint("trajectory-appended");
      }
      for (const { slot, text } of patches) {
        await this.#writeAt(disk.handle, [padded(text, slot.width)], slot.offset);
        slot.text = text;
      }
    } catch (error) {
      await this.#undo(disk, undo);
      throw error;
    }
    return true;
  }

  /**
   * Writes to the undo journal the bytes the coming in-place writes replace, and the file's size; returns
   * that record. A journal that cannot be written is removed (the file is not touched then).
   */
  async #journal(disk: OnDisk, tail: boolean, patches: Patch[]): Promise<UndoRecord> {
    const restore: Array<[number, string]> = tail ? [[disk.messagesEnd, disk.closing]] : [];
    for (const { slot } of patches)
      restore.push([slot.offset, padded(slot.text, slot.width).toString("utf8")]);
    const record = { size: disk.size, restore };
    const path = journalPath(this.#path);
    try {
      disk.journal ??= await open(path, "w");
      this.#journaled = true;
      await this.#writeAt(disk.journal, [encodeUndo(record)], 0);
    } catch (error) {
      await disk.journal?.close().catch(() => {});
      disk.journal = undefined;
      await rm(path, { force: true }).catch(() => {});
      throw error;
    }
    return record;
  }

  /**
   * Puts back what a failed in-place write changed (the file cut back to its size, the replaced bytes
   * written back, in room the file already has), so the file is the save before, whole; then its journal
   * goes. If that fails too, the journal stays for the reader to repair the file with.
   */
  async #undo(disk: OnDisk, record: UndoRecord): Promise<void> {
    try {
      await disk.handle.truncate(record.size);
      for (const [offset, text] of record.restore)
        await this.#writeAt(disk.handle, [Buffer.from(text, "utf8")], offset);
      await disk.journal?.close();
      disk.journal = undefined;
      await rm(journalPath(this.#path), { force: true });
    } catch {
      // the journal repairs the file when it is read
    }
  }

  /** Writes `buffers` at `position`; `cut` (chaos tests) writes half, pauses, then the rest, as a torn write. */
  async #writeAt(handle: FdFile, buffers: Buffer[], position: number, cut = false): Promise<void> {
    if (cut) {
      const all = Buffer.concat(buffers);
      const half = all.length >> 1;
      await this.#writeAt(handle, [all.subarray(0, half)], position);
      chaosPoint("trajectory-tail-cut");
      await this.#writeAt(handle, [all.subarray(half)], position + half);
      return;
    }
    let offset = position;
    let pending = buffers;
    while (pending.length > 0) {
      const { bytesWritten } = await handle.writev(pending, offset);
      offset += bytesWritten;
      this.bytesWritten += bytesWritten;
      pending = skipBytes(pending, bytesWritten);
    }
  }

  /** Writes the whole file atomically; during the run (not `final`) each field gets spare room. */
  async #whole(saved: Saved, fields: Array<[string, string]>, final: boolean): Promise<void> {
    await this.#forget();
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
    const closing = encodeClosing(saved.extras);
    let size = 0;
    const count = (buffer: Buffer) => {
      size += buffer.length;
      return buffer;
    };
    // The first whole write replaces what was at the path, the last one is the result: both fsynced first.
    const durable = final || !this.#wroteWhole;
    await writeFileAtomicBatches(this.#path, fileBatches(head, saved, closing, count), durable);
    this.#wroteWhole = true;
    this.bytesWritten += size;
    if (final && this.#journaled) {
      this.#journaled = false;
      await rm(journalPath(this.#path), { force: true }).catch(() => {});
    }
    if (final || this.#path === "-") return;
    // In-place updates only for a regular file of ours: not through a symlink, not to a device.
    const handle = await open(this.#path, constants.O_RDWR | constants.O_NOFOLLOW).catch(() => undefined);
    if (!handle) return;
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size !== size) {
      await handle.close();
      return;
    }
    const messagesEnd = size - Buffer.byteLength(closing);
    this.#disk = { handle, slots, count: saved.count, messagesEnd, closing, size };
  }

  async #forget(): Promise<void> {
    const disk = this.#disk;
    this.#disk = undefined;
    await disk?.handle.close().catch(() => {});
    await disk?.journal?.close().catch(() => {});
  }

  /** `info`'s fields as `[key, JSON text]`, redacted; the config's text is kept while the object is the same. */
  #fields(info: TrajectoryInfo): Array<[string, string]> {
    return Object.entries(info).map(([key, value]) => {
      const cached = this.#config;
      if (key === "config" && cached && cached.value === value) return [key, cached.json];
      const json = redact(indent(jsonWithFloats(value), "    "));
      if (key === "config") this.#config = { value, json };
      return [key, json];
    });
  }
}

/** A changed `info` field and the slot its new text goes to. */
interface Patch {
  slot: Slot;
  text: string;
}

/** The fields that changed, each with its slot; undefined when one does not fit its slot (or keys differ). */
function changedFields(slots: Slot[], fields: Array<[string, string]>): Patch[] | undefined {
  const patches: Patch[] = [];
  for (const [index, [key, text]] of fields.entries()) {
    const slot = slots[index] as Slot;
    if (slot.key !== key || Buffer.byteLength(text) > slot.width) return undefined;
    if (text !== slot.text) patches.push({ slot, text });
  }
  return patches;
}

/** A field's text padded with spaces to its slot's width. */
function padded(text: string, width: number): Buffer {
  const bytes = Buffer.from(text, "utf8");
  return Buffer.concat([bytes, Buffer.alloc(width - bytes.length, " ")]);
}

/**
 * The new messages and the closing lines, written over the old closing lines; undefined when neither changed.
 * A shorter closing than before is padded so no old byte is left after the final newline.
 */
function newTail(
  disk: OnDisk,
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

/** The whole file's bytes, the messages encoded about a megabyte at a time, each batch when it is asked for. */
function* fileBatches(
  head: string,
  saved: Saved,
  closing: string,
  count: (buffer: Buffer) => Buffer,
): Generator<Buffer[]> {
  let batch: Buffer[] = [count(Buffer.from(head, "utf8"))];
  let bytes = 0;
  for (let index = 0; index < saved.count; index++) {
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

function encodeClosing(extras: Record<string, unknown>): string {
  let closing = `\n  ],\n  "trajectory_format": "${TRAJECTORY_FORMAT}"`;
  for (const [key, value] of Object.entries(extras)) {
    closing += `,\n  ${JSON.stringify(key)}: ${redact(indent(jsonWithFloats(value), "  "))}`;
  }
  return `${closing}\n}\n`;
}
