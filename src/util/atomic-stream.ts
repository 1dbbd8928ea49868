import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

let counter = 0;

/**
 * A file written piece by piece that appears only when complete: pieces go to a temp file next to
 * `path`, `commit()` renames it over `path`, `abort()` removes it. Readers (and a crash) see either the
 * previous file or the whole new one, and the content is never held in memory at once.
 */
export class AtomicFileStream {
  readonly path: string;
  readonly #temp: string;
  #fd: number | undefined;

  constructor(path: string) {
    this.path = path;
    mkdirSync(dirname(path), { recursive: true });
    counter += 1;
    this.#temp = join(dirname(path), `.${basename(path)}.${process.pid}.${counter}.tmp`);
    this.#fd = openSync(this.#temp, "w", 0o644);
  }

  write(text: string): void {
    if (this.#fd === undefined) throw new Error(`${this.path}: already closed`);
    const buffer = Buffer.from(text, "utf8");
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(this.#fd, buffer, offset);
  }

  commit(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
    renameSync(this.#temp, this.path);
  }

  abort(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
    rmSync(this.#temp, { force: true });
  }
}
