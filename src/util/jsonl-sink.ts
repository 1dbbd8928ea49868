import { closeSync, openSync, writeSync } from "node:fs";
import { redact } from "./secrets.js";

/** Where JSON lines go. `write` must not throw (an event log never ends a run). */
export interface LineSink {
  write(record: Record<string, unknown>): void;
  close(): void;
}

/**
 * Appends one JSON object per line to a file (opened with O_APPEND) or to standard output (`-`), each line
 * redacted and written whole with one synchronous write, so `tail -f` never sees a torn line, also when
 * many workers (or processes) write to the same file. A failed write is reported once on stderr and the
 * sink goes quiet.
 */
export class JsonlSink implements LineSink {
  readonly path: string;
  #fd: number | undefined;
  readonly #ownsFd: boolean;
  #failed = false;

  constructor(path: string) {
    this.path = path;
    this.#ownsFd = path !== "-";
    this.#fd = path === "-" ? 1 : openSync(path, "a");
  }

  write(record: Record<string, unknown>): void {
    if (this.#fd === undefined || this.#failed) return;
    const line = `${redact(JSON.stringify(record))}\n`;
    try {
      // One write of the whole line; a short write (a full pipe) continues with the rest of its bytes.
      let written = this.#writeOnce(line);
      const length = Buffer.byteLength(line);
      if (written < length) {
        const bytes = Buffer.from(line);
        while (written < length) written += this.#writeOnce(bytes, written);
      }
    } catch (error) {
      this.#failed = true;
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      process.stderr.write(`swerun: writing events to ${this.path} failed (${code}); no more events\n`);
    }
  }

  /** One write(2); 0 when standard output is a non-blocking pipe that is full for now (then it is tried again). */
  #writeOnce(data: string | Buffer, offset = 0): number {
    try {
      return typeof data === "string"
        ? writeSync(this.#fd ?? 1, data)
        : writeSync(this.#fd ?? 1, data, offset);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") return 0;
      throw error;
    }
  }

  close(): void {
    if (this.#fd !== undefined && this.#ownsFd) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** Keeps the lines in memory (tests and library users that read events in process). */
export class MemorySink implements LineSink {
  readonly records: Record<string, unknown>[] = [];
  write(record: Record<string, unknown>): void {
    this.records.push(JSON.parse(redact(JSON.stringify(record))) as Record<string, unknown>);
  }
  close(): void {}
}
