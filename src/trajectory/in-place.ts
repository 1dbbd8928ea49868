import { constants } from "node:fs";
import { chaosArmed, chaosPoint } from "../util/chaos.js";
import { type FdFile, open, rm, skipBytes } from "../util/fd-file.js";
import { encodeUndo, journalPath, type UndoRecord } from "./journal.js";
import { changedFields, type Layout, newTail, type Patch, padded, type Saved } from "./layout.js";

/** What an in-place file tells its writer: the bytes it wrote, and that it opened an undo journal. */
export interface InPlaceHooks {
  written(bytes: number): void;
  journaled(): void;
}

/**
 * A trajectory file that TrajectoryWriter wrote whole and keeps open between saves, to write in place only
 * what changed: the new messages with the closing lines over the old closing lines, then any `info` field
 * that changed over its old text. Before each write, the bytes it replaces go to the undo journal
 * (`journal.ts`); a write that fails is undone.
 */
export class InPlaceFile {
  readonly #path: string;
  readonly #handle: FdFile;
  /** The undo journal, opened at the first in-place write. */
  #journal: FdFile | undefined;
  readonly #layout: Layout;
  readonly #hooks: InPlaceHooks;

  private constructor(path: string, handle: FdFile, layout: Layout, hooks: InPlaceHooks) {
    this.#path = path;
    this.#handle = handle;
    this.#layout = layout;
    this.#hooks = hooks;
  }

  /**
   * The file just written whole at `path` in `layout`, opened for in-place updates; undefined unless it is a
   * regular file of ours (not through a symlink, not a device) of the size written.
   */
  static async open(path: string, layout: Layout, hooks: InPlaceHooks): Promise<InPlaceFile | undefined> {
    const handle = await open(path, constants.O_RDWR | constants.O_NOFOLLOW).catch(() => undefined);
    if (!handle) return undefined;
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size !== layout.size) {
      await handle.close();
      return undefined;
    }
    return new InPlaceFile(path, handle, layout, hooks);
  }

  /**
   * Writes what changed since the last save into the file; false when a whole-file write is needed. A held
   * exit save (`heldExit`) leaves `info` as it was when a changed field does not fit its room.
   */
  async update(saved: Saved, fields: Array<[string, string]>, heldExit: boolean): Promise<boolean> {
    const disk = this.#layout;
    if (saved.count < disk.count || fields.length !== disk.slots.length) return false;
    const patches = changedFields(disk.slots, fields) ?? (heldExit ? [] : undefined);
    if (!patches) return false;
    const stat = await this.#handle.stat().catch(() => undefined);
    if (!stat || stat.nlink === 0 || stat.size !== disk.size) return false;
    const tail = newTail(disk, saved);
    if (!tail && patches.length === 0) return true;
    const undo = await this.#writeJournal(tail !== undefined, patches);
    try {
      if (tail) {
        await this.#writeAt(this.#handle, tail.buffers, disk.messagesEnd, chaosArmed("trajectory-tail-cut"));
        disk.count = saved.count;
        disk.messagesEnd = tail.end;
        disk.closing = tail.closing;
        disk.size = tail.size;
        chaosPoint("trajectory-appended");
      }
      for (const { slot, text } of patches) {
        await this.#writeAt(this.#handle, [padded(text, slot.width)], slot.offset);
        slot.text = text;
      }
    } catch (error) {
      await this.#undo(undo);
      throw error;
    }
    return true;
  }

  /**
   * Writes to the undo journal the bytes the coming in-place writes replace, and the file's size; returns
   * that record. A journal that cannot be written is removed (the file is not touched then).
   */
  async #writeJournal(tail: boolean, patches: Patch[]): Promise<UndoRecord> {
    const disk = this.#layout;
    const restore: Array<[number, string]> = tail ? [[disk.messagesEnd, disk.closing]] : [];
    for (const { slot } of patches)
      restore.push([slot.offset, padded(slot.text, slot.width).toString("utf8")]);
    const record = { size: disk.size, restore };
    const path = journalPath(this.#path);
    try {
      this.#journal ??= await open(path, "w");
      this.#hooks.journaled();
      await this.#writeAt(this.#journal, [encodeUndo(record)], 0);
    } catch (error) {
      await this.#journal?.close().catch(() => {});
      this.#journal = undefined;
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
  async #undo(record: UndoRecord): Promise<void> {
    try {
      await this.#handle.truncate(record.size);
      for (const [offset, text] of record.restore)
        await this.#writeAt(this.#handle, [Buffer.from(text, "utf8")], offset);
      await this.#journal?.close();
      this.#journal = undefined;
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
      this.#hooks.written(bytesWritten);
      pending = skipBytes(pending, bytesWritten);
    }
  }

  /** Closes the file and its journal (the journal file stays, for the reader to repair with). */
  async close(): Promise<void> {
    await this.#handle.close().catch(() => {});
    await this.#journal?.close().catch(() => {});
  }
}
