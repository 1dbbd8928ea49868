/**
 * The few promise-returning file calls the run path makes (open a file and write, sync, truncate, stat and close it;
 * stat, make, rename and remove paths), on Node's callback API: `node:fs/promises` loads readline, file
 * watchers and streams of its own, ~3.3 ms of a short run's start (bench/lean.ts).
 */
import * as fs from "node:fs";
import { promisify } from "node:util";

const openFd = promisify(fs.open);
const closeFd = promisify(fs.close);
const fstatFd = promisify(fs.fstat);
const fsyncFd = promisify(fs.fsync);
const writevFd = promisify(fs.writev);
const ftruncateFd = promisify(fs.ftruncate);

export const stat = promisify(fs.stat);
export const mkdir = promisify(fs.mkdir);
export const rename = promisify(fs.rename);
export const rm = promisify(fs.rm);

/** An open file, as much of a `FileHandle` as swerun uses. Closed once: a second close does nothing. */
export class FdFile {
  #fd: number;

  constructor(fd: number) {
    this.#fd = fd;
  }

  stat(): Promise<fs.Stats> {
    return fstatFd(this.#open());
  }

  /** Writes the buffers at `position` (at the current offset without one); resolves to the bytes written. */
  writev(buffers: Buffer[], position?: number): Promise<{ bytesWritten: number }> {
    return writevFd(this.#open(), buffers, position);
  }

  sync(): Promise<void> {
    return fsyncFd(this.#open());
  }

  truncate(length: number): Promise<void> {
    return ftruncateFd(this.#open(), length);
  }

  async close(): Promise<void> {
    const fd = this.#fd;
    if (fd < 0) return;
    // Forgotten first: a file descriptor closed twice could close another file that reused its number.
    this.#fd = -1;
    await closeFd(fd);
  }

  #open(): number {
    if (this.#fd < 0) throw Object.assign(new Error("file closed"), { code: "EBADF" });
    return this.#fd;
  }
}

/** Opens a file (`flags` as fs.open takes them). */
export async function open(path: string, flags: string | number, mode?: number): Promise<FdFile> {
  return new FdFile(await openFd(path, flags, mode));
}

/** What is left to write of `buffers` after a write (vectored, maybe partial) wrote `count` bytes. */
export function skipBytes(buffers: Buffer[], count: number): Buffer[] {
  let rest = count;
  const result: Buffer[] = [];
  for (const buffer of buffers) {
    if (rest >= buffer.length) {
      rest -= buffer.length;
      continue;
    }
    result.push(rest > 0 ? buffer.subarray(rest) : buffer);
    rest = 0;
  }
  return result;
}
