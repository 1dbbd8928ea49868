import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  rmSync,
  writevSync,
} from "node:fs";
import { chaosArmed, chaosPoint } from "../util/chaos.js";
import { skipBytes } from "../util/fd-file.js";
import { secretsVersion } from "../util/secrets.js";
import { encodeUndo, journalPath, type UndoRecord } from "./journal.js";
import {
  changedFields,
  type Layout,
  type MessagesOnDisk,
  newTail,
  type Patch,
  padded,
  type Saved,
} from "./layout.js";

/** How much of the file a whole-file write reads at a time when it copies the messages already written. */
const COPY_CHUNK = 1 << 20;

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
 *
 * The in-place writes are synchronous: a step's are a few small writes (a check of the file, the journal's
 * line, the new messages, the changed field), about 10 us on the main thread, where the same calls through
 * the thread pool cost ~150 us of CPU a step, spent beside the next command (bench/local.ts). The whole-file
 * writes, which can be large, stay asynchronous.
 */
export class InPlaceFile {
  readonly #path: string;
  /** The file's descriptor; -1 once closed. */
  #fd: number;
  /** The undo journal's descriptor, opened at the first in-place write; -1 until then. */
  #journal = -1;
  readonly #layout: Layout;
  readonly #hooks: InPlaceHooks;

  private constructor(path: string, fd: number, layout: Layout, hooks: InPlaceHooks) {
    this.#path = path;
    this.#fd = fd;
    this.#layout = layout;
    this.#hooks = hooks;
  }

  /**
   * The file just written whole at `path` in `layout`, opened for in-place updates; undefined unless it is a
   * regular file of ours (not through a symlink, not a device) of the size written.
   */
  static open(path: string, layout: Layout, hooks: InPlaceHooks): InPlaceFile | undefined {
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDWR | constants.O_NOFOLLOW);
    } catch {
      return undefined;
    }
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size !== layout.size) {
      closeSync(fd);
      return undefined;
    }
    return new InPlaceFile(path, fd, layout, hooks);
  }

  /**
   * Writes what changed since the last save into the file; false when a whole-file write is needed. A held
   * exit save (`heldExit`) leaves `info` as it was when a changed field does not fit its room.
   */
  update(saved: Saved, fields: Array<[string, string]>, heldExit: boolean): boolean {
    const disk = this.#layout;
    if (saved.count < disk.count || fields.length !== disk.slots.length) return false;
    // A secret registered since: the whole file is written again, every message redacted as now.
    if (disk.secrets !== secretsVersion()) return false;
    const patches = changedFields(disk.slots, fields) ?? (heldExit ? [] : undefined);
    if (!patches) return false;
    if (!this.#intact()) return false;
    const tail = newTail(disk, saved);
    if (!tail && patches.length === 0) return true;
    const undo = this.#writeJournal(tail !== undefined, patches);
    try {
      if (tail) {
        this.#writeAt(this.#fd, tail.buffers, disk.messagesEnd, chaosArmed("trajectory-tail-cut"));
        disk.count = saved.count;
        disk.messagesEnd = tail.end;
        disk.closing = tail.closing;
        disk.size = tail.size;
        chaosPoint("trajectory-appended");
      }
      for (const { slot, text } of patches) {
        this.#writeAt(this.#fd, [padded(text, slot.width)], slot.offset);
        slot.text = text;
      }
    } catch (error) {
      this.#undo(undo);
      throw error;
    }
    return true;
  }

  /**
   * Writes to the undo journal the bytes the coming in-place writes replace, and the file's size; returns
   * that record. A journal that cannot be written is removed (the file is not touched then).
   */
  #writeJournal(tail: boolean, patches: Patch[]): UndoRecord {
    const disk = this.#layout;
    const restore: Array<[number, string]> = tail ? [[disk.messagesEnd, disk.closing]] : [];
    for (const { slot } of patches)
      restore.push([slot.offset, padded(slot.text, slot.width).toString("utf8")]);
    const record = { size: disk.size, restore };
    const path = journalPath(this.#path);
    try {
      if (this.#journal < 0) this.#journal = openSync(path, "w");
      this.#hooks.journaled();
      this.#writeAt(this.#journal, [encodeUndo(record)], 0);
    } catch (error) {
      try {
        this.#closeJournal();
        rmSync(path, { force: true });
      } catch {}
      throw error;
    }
    return record;
  }

  /**
   * Puts back what a failed in-place write changed (the file cut back to its size, the replaced bytes
   * written back, in room the file already has), so the file is the save before, whole; then its journal
   * goes. If that fails too, the journal stays for the reader to repair the file with.
   */
  #undo(record: UndoRecord): void {
    try {
      ftruncateSync(this.#fd, record.size);
      for (const [offset, text] of record.restore)
        this.#writeAt(this.#fd, [Buffer.from(text, "utf8")], offset);
      this.#closeJournal();
      rmSync(journalPath(this.#path), { force: true });
    } catch {
      // the journal repairs the file when it is read
    }
  }

  /** Writes `buffers` at `position`; `cut` (chaos tests) writes half, pauses, then the rest, as a torn write. */
  #writeAt(fd: number, buffers: Buffer[], position: number, cut = false): void {
    if (fd < 0) throw Object.assign(new Error("file closed"), { code: "EBADF" });
    if (cut) {
      const all = Buffer.concat(buffers);
      const half = all.length >> 1;
      this.#writeAt(fd, [all.subarray(0, half)], position);
      chaosPoint("trajectory-tail-cut");
      this.#writeAt(fd, [all.subarray(half)], position + half);
      return;
    }
    let offset = position;
    let pending = buffers;
    while (pending.length > 0) {
      const written = writevSync(fd, pending, offset);
      offset += written;
      this.#hooks.written(written);
      pending = skipBytes(pending, written);
    }
  }

  /**
   * The messages the file holds, as a whole-file write of `saved` can copy them instead of encoding them again
   * (their bytes are the same): undefined when the file changed under it, holds messages `saved` does not, or
   * was redacted before a secret was registered. The chunks are read as they are asked for, into one buffer
   * (each is written before the next is read), while this file is open.
   */
  messages(saved: Saved): MessagesOnDisk | undefined {
    const disk = this.#layout;
    if (disk.count > saved.count || disk.secrets !== secretsVersion() || !this.#intact()) return undefined;
    const fd = this.#fd;
    const { messagesStart, messagesEnd } = disk;
    function* chunks(): Generator<Buffer> {
      const buffer = Buffer.allocUnsafe(Math.min(COPY_CHUNK, Math.max(1, messagesEnd - messagesStart)));
      for (let at = messagesStart; at < messagesEnd; ) {
        const count = readSync(fd, buffer, 0, Math.min(buffer.length, messagesEnd - at), at);
        if (count === 0) throw Object.assign(new Error("the trajectory file got shorter"), { code: "EIO" });
        at += count;
        yield buffer.subarray(0, count);
      }
    }
    return { count: disk.count, chunks: chunks() };
  }

  /** Whether the file is still there (not removed) at the size last written. */
  #intact(): boolean {
    try {
      const stat = fstatSync(this.#fd);
      return stat.nlink > 0 && stat.size === this.#layout.size;
    } catch {
      return false;
    }
  }

  #closeJournal(): void {
    const fd = this.#journal;
    // Forgotten first: a descriptor closed twice could close another file that reused its number.
    this.#journal = -1;
    if (fd >= 0) closeSync(fd);
  }

  /** Closes the file and its journal (the journal file stays, for the reader to repair with). */
  close(): void {
    const fd = this.#fd;
    this.#fd = -1;
    try {
      if (fd >= 0) closeSync(fd);
    } catch {}
    try {
      this.#closeJournal();
    } catch {}
  }
}
