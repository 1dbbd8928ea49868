import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { tempPathOf } from "./atomic-write.js";
import { chaosPoint } from "./chaos.js";
import { namingFile } from "./file-error.js";
import { makeDirsSync } from "./make-dirs.js";
import { writeTargetOf } from "./write-target.js";

/**
 * A file written piece by piece that appears only when complete: pieces go to a temp file next to
 * `path` (named with this process's pid, so a later command removes it when a kill left it: removeStaleTemps),
 * `commit()` renames it over `path` (fsynced first when it replaces a file), `abort()` removes it. Readers (and a crash or a full disk)
 * see either the previous file or the whole new one, and the content is never held in memory at once. A
 * failed write throws a FileWriteError naming `path`. A device or a pipe (or a symlink to one) is written
 * through instead, a symlink to a file is followed (writeTargetOf).
 */
export class AtomicFileStream {
  readonly path: string;
  readonly #temp: string | undefined;
  #target = "";
  #fd: number | undefined;

  constructor(path: string) {
    this.path = path;
    const target = namingFile(path, () => writeTargetOf(path));
    if (target.stream) {
      this.#fd = namingFile(path, () => openSync(target.path, "w"));
      return;
    }
    namingFile(path, () => makeDirsSync(dirname(target.path)));
    const temp = tempPathOf(target.path);
    this.#fd = namingFile(path, () => openSync(temp, "w", 0o644));
    this.#temp = temp;
    this.#target = target.path;
  }

  write(text: string): void {
    this.writeBytes(Buffer.from(text, "utf8"));
  }

  writeBytes(buffer: Uint8Array): void {
    const fd = this.#fd;
    if (fd === undefined) throw new Error(`${this.path}: already closed`);
    namingFile(this.path, () => {
      let offset = 0;
      while (offset < buffer.length) offset += writeSync(fd, buffer, offset);
    });
  }

  commit(): void {
    const fd = this.#fd;
    if (fd === undefined) return;
    namingFile(this.path, () => {
      if (this.#temp && existsSync(this.#target)) fsyncSync(fd);
      this.#fd = undefined;
      closeSync(fd);
      if (!this.#temp) return;
      chaosPoint("atomic-rename");
      renameSync(this.#temp, this.#target);
    });
  }

  abort(): void {
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd !== undefined) closeSync(fd);
    if (this.#temp) rmSync(this.#temp, { force: true });
  }
}
