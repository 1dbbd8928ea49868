import { closeSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { makeDirsSync } from "./make-dirs.js";
import { writeTargetOf } from "./write-target.js";

let counter = 0;

/**
 * A file written piece by piece that appears only when complete: pieces go to a temp file next to
 * `path`, `commit()` renames it over `path`, `abort()` removes it. Readers (and a crash) see either the
 * previous file or the whole new one, and the content is never held in memory at once. A device or a pipe
 * (or a symlink to one) is written through instead, a symlink to a file is followed (writeTargetOf).
 */
export class AtomicFileStream {
  readonly path: string;
  readonly #temp: string | undefined;
  #target = "";
  #fd: number | undefined;

  constructor(path: string) {
    this.path = path;
    const target = writeTargetOf(path);
    if (target.stream) {
      this.#fd = openSync(target.path, "w");
      return;
    }
    makeDirsSync(dirname(target.path));
    counter += 1;
    this.#temp = join(dirname(target.path), `.${basename(target.path)}.${process.pid}.${counter}.tmp`);
    this.#target = target.path;
    this.#fd = openSync(this.#temp, "w", 0o644);
  }

  write(text: string): void {
    this.writeBytes(Buffer.from(text, "utf8"));
  }

  writeBytes(buffer: Uint8Array): void {
    if (this.#fd === undefined) throw new Error(`${this.path}: already closed`);
    let offset = 0;
    while (offset < buffer.length) offset += writeSync(this.#fd, buffer, offset);
  }

  commit(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
    if (this.#temp) renameSync(this.#temp, this.#target);
  }

  abort(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
    if (this.#temp) rmSync(this.#temp, { force: true });
  }
}
