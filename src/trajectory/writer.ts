import type { Message } from "../messages.js";
import { writeFileAtomicBatches } from "../util/atomic-write.js";
import { rm } from "../util/fd-file.js";
import { type FileWriteError, fileWriteError } from "../util/file-error.js";
import { jsonWithFloats } from "../util/float-json.js";
import { redact, secretsVersion } from "../util/secrets.js";
import type { TrajectoryInfo } from "./format.js";
import { InPlaceFile } from "./in-place.js";
import { journalPath } from "./journal.js";
import { encodeClosing, encodeHead, fileBatches, indent, type Saved } from "./layout.js";

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
 * offsets. A save starts being written after the caller's current turn of the event loop, so that what the
 * caller does next (the next step's command or model request) is on its way first and the encoding and the
 * writes run beside it (`flush` starts it at once). A whole-file write runs in the thread pool (an in-place one
 * is a few small synchronous writes: in-place.ts); saves that arrive while one is waiting or being
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
  #onFailure: ((error: FileWriteError) => void) | undefined;
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
  #disk: InPlaceFile | undefined;
  #journaled = false;
  #writing: Promise<void> | undefined;
  /** The write of the latest save, scheduled to start after the caller's current turn. */
  #soon: NodeJS.Immediate | undefined;
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
    if (this.#writing || this.#soon) return;
    // Written once what the caller does next has been sent on its way (the next step's command or model
    // request): the encoding and the writes then run beside it instead of before it.
    this.#soon = setImmediate(() => this.#start());
  }

  /** Starts writing the latest save now, if one waits. */
  #start(): void {
    clearImmediate(this.#soon);
    this.#soon = undefined;
    if (this.#next) this.#writing ??= this.#drain();
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
      this.#forget();
      // Ended: nothing of the run is held here any more (its messages, through the last save and the failure
      // callback's agent), so a long run's last outputs, which read its file back, do not hold both.
      this.#last = undefined;
      this.#onFailure = undefined;
    }
  }

  /** Resolves once everything saved so far is on disk; rejects if a write failed. */
  async flush(): Promise<void> {
    this.#start();
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
          this.#forget();
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
      this.#forget();
      this.#onFailure?.(error);
    } finally {
      this.#writing = undefined;
    }
  }

  async #write(saved: Saved): Promise<void> {
    const exit = saved.messages[saved.count - 1]?.role === "exit";
    const final = saved.final ?? (exit && !this.#hold);
    const fields = this.#fields(saved.info);
    if (!final && this.#disk?.update(saved, fields, exit)) return;
    await this.#whole(saved, fields, final);
  }

  /** Writes the whole file atomically; during the run (not `final`) each field gets spare room. */
  async #whole(saved: Saved, fields: Array<[string, string]>, final: boolean): Promise<void> {
    const disk = this.#disk;
    this.#disk = undefined;
    const { head, slots } = encodeHead(fields, final);
    const closing = encodeClosing(saved.extras);
    const secrets = secretsVersion();
    let size = 0;
    const count = (buffer: Buffer) => {
      size += buffer.length;
      return buffer;
    };
    // The first whole write replaces what was at the path, the last one is the result: both fsynced first.
    const durable = final || !this.#wroteWhole;
    try {
      // The messages already in the file are copied from it, not encoded again: a long run's last save
      // costs a read of the file instead of ~4x its size in short-lived strings (bench/lean.ts, memory).
      const batches = fileBatches(head, saved, closing, count, disk?.messages(saved));
      await writeFileAtomicBatches(this.#path, batches, durable);
    } finally {
      disk?.close();
    }
    this.#wroteWhole = true;
    this.bytesWritten += size;
    if (final && this.#journaled) {
      this.#journaled = false;
      await rm(journalPath(this.#path), { force: true }).catch(() => {});
    }
    if (final || this.#path === "-") return;
    const messagesStart = Buffer.byteLength(head);
    const messagesEnd = size - Buffer.byteLength(closing);
    this.#disk = InPlaceFile.open(
      this.#path,
      { slots, count: saved.count, messagesStart, messagesEnd, closing, size, secrets },
      { written: (bytes) => (this.bytesWritten += bytes), journaled: () => (this.#journaled = true) },
    );
  }

  #forget(): void {
    const disk = this.#disk;
    this.#disk = undefined;
    disk?.close();
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
