import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, writevSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { chaosPoint } from "./chaos.js";
import { open, rename, rm, skipBytes } from "./fd-file.js";
import { makeDirs, makeDirsSync } from "./make-dirs.js";
import { processAlive } from "./process-alive.js";
import { writeTargetOf } from "./write-target.js";

let counter = 0;
/** Folders this process has created or found: a save does not ask again (one syscall less per step). */
const knownDirs = new Set<string>();

/**
 * Writes `chunks` to `path` so that readers (and a crash or kill at any moment) see either the previous
 * complete file or the new complete file: write a temp file next to it, then rename over it.
 * `durable` also fsyncs the data (power loss); a process kill is covered without it. What is not a regular
 * file is never replaced: a symlink to one is followed, a device or a pipe is written through (writeTargetOf).
 */
export function writeFileAtomic(given: string, chunks: Array<string | Buffer>, durable = false): void {
  const buffers = chunks.map((chunk) => (typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk));
  const target = writeTargetOf(given);
  if (target.stream) {
    writeThrough(target.path, buffers);
    return;
  }
  const path = target.path;
  const dir = dirname(path);
  if (!knownDirs.has(dir)) {
    makeDirsSync(dir);
    knownDirs.add(dir);
  }
  counter += 1;
  const temp = join(dir, `.${basename(path)}.${process.pid}.${counter}.tmp`);
  const fd = openSync(temp, "w", 0o644);
  try {
    let total = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
    let pending = buffers;
    while (total > 0) {
      const written = writevSync(fd, pending);
      total -= written;
      pending = skipBytes(pending, written);
    }
    if (durable) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  chaosPoint("atomic-rename");
  renameSync(temp, path);
}

/**
 * writeFileAtomic for content made while it is written: `fill` writes the temp file through its descriptor
 * (e.g. copying from another file in chunks, so the content is never whole in memory). Regular files only:
 * a device or a pipe (writeTargetOf) is an error.
 */
export function writeFileAtomicWith(given: string, fill: (fd: number) => void): void {
  const target = writeTargetOf(given);
  if (target.stream) throw new Error(`${given}: not a regular file`);
  const path = target.path;
  counter += 1;
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${counter}.tmp`);
  const fd = openSync(temp, "w", 0o644);
  try {
    fill(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
  closeSync(fd);
  chaosPoint("atomic-rename");
  renameSync(temp, path);
}

/** writeFileAtomic, but the writing happens in libuv's thread pool instead of the main thread. */
export async function writeFileAtomicAsync(given: string, buffers: Buffer[], durable = false): Promise<void> {
  await writeFileAtomicBatches(given, [buffers], durable);
}

/**
 * writeFileAtomicAsync for content made batch by batch as it is written (each batch is made when the one
 * before is written), so that a large file is never whole in memory.
 */
export async function writeFileAtomicBatches(
  given: string,
  batches: Iterable<Buffer[]>,
  durable = false,
): Promise<void> {
  const target = writeTargetOf(given);
  if (target.stream) {
    writeThrough(target.path, [...batches].flat());
    return;
  }
  const path = target.path;
  const dir = dirname(path);
  if (!knownDirs.has(dir)) {
    await makeDirs(dir);
    knownDirs.add(dir);
  }
  counter += 1;
  const temp = join(dir, `.${basename(path)}.${process.pid}.${counter}.tmp`);
  const handle = await open(temp, "w", 0o644);
  try {
    for (const buffers of batches) {
      let pending = buffers;
      let total = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
      while (total > 0) {
        const { bytesWritten } = await handle.writev(pending);
        total -= bytesWritten;
        pending = skipBytes(pending, bytesWritten);
      }
    }
    if (durable) await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  chaosPoint("atomic-rename");
  await rename(temp, path);
}

/** Writes the whole of `buffers` into a device or pipe, opened as it is (nothing renamed over it). */
function writeThrough(path: string, buffers: Buffer[]): void {
  const fd = openSync(path, "w");
  try {
    let total = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
    let pending = buffers;
    while (total > 0) {
      const written = writevSync(fd, pending);
      total -= written;
      pending = skipBytes(pending, written);
    }
  } finally {
    closeSync(fd);
  }
}

/** The temp file of an atomic write: `.<name>.<pid>.<counter>.tmp`, next to its target. */
const TEMP_FILE = /^\..+\.(\d+)\.\d+\.tmp$/;

/**
 * Removes from `dir` the temp files of atomic writes that were interrupted (their process was killed
 * between writing and renaming); those of live processes stay. Returns the names removed.
 */
export function removeStaleTemps(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = Number(TEMP_FILE.exec(name)?.[1]);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    rmSync(join(dir, name), { force: true });
    removed.push(name);
  }
  return removed;
}
