import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writevSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { chaosPoint } from "./chaos.js";
import { type FdFile, open, rename, rm, skipBytes } from "./fd-file.js";
import { fileWriteError, namingFile } from "./file-error.js";
import { makeDirs, makeDirsSync } from "./make-dirs.js";
import { processAlive } from "./process-alive.js";
import { writeTargetOf } from "./write-target.js";

let counter = 0;
/** Folders this process has created or found: a save does not ask again (one syscall less per step). */
const knownDirs = new Set<string>();

/**
 * The temp file of an atomic write of `path`: `.<name>.<pid>.<counter>.tmp` next to it. The pid tells a later
 * process whether its writer is gone (removeStaleTemps).
 */
export function tempPathOf(path: string): string {
  counter += 1;
  return join(dirname(path), `.${basename(path)}.${process.pid}.${counter}.tmp`);
}

/**
 * Writes `chunks` to `path` so that readers (and a crash, a kill or a full disk at any moment) see either the
 * previous complete file or the new complete file: write a temp file next to it, then rename it over the old
 * one. Any failure (no space, no permission; at the write, the fsync or the rename) removes the temp file,
 * leaves the old file as it was and throws a FileWriteError naming `path`. `durable` (default): a write that
 * replaces a file fsyncs the new one before the rename, so a file system that reports no space only then
 * (network and quota-limited ones) never gets a file renamed over the old one that it did not store (a new
 * file replaces nothing: no fsync). What is not a regular file is never replaced: a symlink to one is
 * followed, a device or a pipe is written through (writeTargetOf).
 */
export function writeFileAtomic(given: string, chunks: Array<string | Buffer>, durable = true): void {
  const buffers = chunks.map((chunk) => (typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk));
  const target = namingFile(given, () => writeTargetOf(given));
  if (target.stream) {
    namingFile(given, () => writeThrough(target.path, buffers));
    return;
  }
  const path = target.path;
  const dir = dirname(path);
  if (!knownDirs.has(dir)) {
    namingFile(path, () => makeDirsSync(dir));
    knownDirs.add(dir);
  }
  writeTemp(path, (fd) => writeAllSync(fd, buffers), durable);
}

/**
 * writeFileAtomic for content made while it is written: `fill` writes the temp file through its descriptor
 * (e.g. copying from another file in chunks, so the content is never whole in memory). Regular files only:
 * a device or a pipe (writeTargetOf) is an error.
 */
export function writeFileAtomicWith(given: string, fill: (fd: number) => void, durable = true): void {
  const target = namingFile(given, () => writeTargetOf(given));
  if (target.stream) throw new Error(`${given}: not a regular file`);
  writeTemp(target.path, fill, durable);
}

/** The temp file of `path` filled by `fill`, fsynced when `durable` and it replaces a file, renamed over `path`; removed on failure. */
function writeTemp(path: string, fill: (fd: number) => void, durable: boolean): void {
  const temp = tempPathOf(path);
  const sync = durable && existsSync(path);
  let fd: number | undefined;
  try {
    fd = openSync(temp, "w", 0o644);
    fill(fd);
    if (sync) fsyncSync(fd);
    const opened = fd;
    fd = undefined;
    closeSync(opened);
    chaosPoint("atomic-rename");
    renameSync(temp, path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(temp, { force: true });
    throw fileWriteError(path, error);
  }
}

/** writeFileAtomic, but the writing happens in libuv's thread pool instead of the main thread. */
export async function writeFileAtomicAsync(given: string, buffers: Buffer[], durable = true): Promise<void> {
  await writeFileAtomicBatches(given, [buffers], durable);
}

/**
 * writeFileAtomicAsync for content made batch by batch as it is written (each batch is made when the one
 * before is written), so that a large file is never whole in memory. `durable` as writeFileAtomic's.
 */
export async function writeFileAtomicBatches(
  given: string,
  batches: Iterable<Buffer[]>,
  durable = true,
): Promise<void> {
  const target = namingFile(given, () => writeTargetOf(given));
  if (target.stream) {
    namingFile(given, () => writeThroughBatches(target.path, batches));
    return;
  }
  const path = target.path;
  const dir = dirname(path);
  try {
    if (!knownDirs.has(dir)) {
      await makeDirs(dir);
      knownDirs.add(dir);
    }
  } catch (error) {
    throw fileWriteError(path, error);
  }
  const temp = tempPathOf(path);
  const sync = durable && existsSync(path);
  let handle: FdFile | undefined;
  try {
    handle = await open(temp, "w", 0o644);
    for (const buffers of batches) {
      let pending = buffers;
      let total = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
      while (total > 0) {
        const { bytesWritten } = await handle.writev(pending);
        total -= bytesWritten;
        pending = skipBytes(pending, bytesWritten);
      }
    }
    if (sync) await handle.sync();
    await handle.close();
    chaosPoint("atomic-rename");
    await rename(temp, path);
  } catch (error) {
    await handle?.close().catch(() => {});
    await rm(temp, { force: true }).catch(() => {});
    throw fileWriteError(path, error);
  }
}

/** Writes all of `buffers` at the descriptor's offset (writev may write part of them). */
export function writeAllSync(fd: number, buffers: Buffer[]): void {
  let total = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
  let pending = buffers;
  while (total > 0) {
    const written = writevSync(fd, pending);
    total -= written;
    pending = skipBytes(pending, written);
  }
}

/** Writes the whole of `buffers` into a device or pipe, opened as it is (nothing renamed over it). */
function writeThrough(path: string, buffers: Buffer[]): void {
  const fd = openSync(path, "w");
  try {
    writeAllSync(fd, buffers);
  } finally {
    closeSync(fd);
  }
}

/** `writeThrough` of batches, each written before the next is taken (a batch's buffers may be reused). */
function writeThroughBatches(path: string, batches: Iterable<Buffer[]>): void {
  const fd = openSync(path, "w");
  try {
    for (const buffers of batches) writeAllSync(fd, buffers);
  } finally {
    closeSync(fd);
  }
}

/** The temp file of an atomic write: `.<name>.<pid>.<counter>.tmp`, next to its target. */
const TEMP_FILE = /^\.(.+)\.(\d+)\.\d+\.tmp$/;

/**
 * Removes from `dir` the temp files of atomic writes that were interrupted (their process was killed
 * between writing and renaming); those of live processes stay. With `of`, only the temp files of that file
 * name. Returns the names removed.
 */
export function removeStaleTemps(dir: string, of?: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const match = TEMP_FILE.exec(name);
    const pid = Number(match?.[2]);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    if (of !== undefined && match?.[1] !== of) continue;
    try {
      rmSync(join(dir, name), { force: true });
      removed.push(name);
    } catch {
      // a folder that cannot be written keeps it: the next start tries again
    }
  }
  return removed;
}
