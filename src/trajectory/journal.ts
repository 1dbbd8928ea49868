import { readFileSync, rmSync } from "node:fs";
import { writeFileAtomic } from "../util/atomic-write.js";

/**
 * The undo journal of a trajectory written in place: before the writer overwrites bytes of the file (a step's
 * messages over the old closing lines, a changed `info` field over its old text), it writes to
 * `<file>.undo` the bytes it is about to replace and the file's size, as one JSON line. A SIGKILL in the
 * middle of the in-place write (Linux can stop a large write at a page boundary for a fatal signal) leaves a
 * file that does not parse; putting the old bytes back gives the file as the save before left it, every step
 * it held whole. The journal is written before the file, so while it is being written the file is still
 * whole; it is only read when the file does not parse. The writer's last (whole-file) save removes it.
 */

export const journalPath = (path: string): string => `${path}.undo`;

/** What to put back: the file's size before the in-place write, and `[offset, old text]` of each region. */
export interface UndoRecord {
  size: number;
  restore: Array<[number, string]>;
}

/** The journal's bytes for a record: one JSON line (JSON holds no raw newline), read up to its newline. */
export const encodeUndo = (record: UndoRecord): Buffer => Buffer.from(`${JSON.stringify(record)}\n`, "utf8");

function readUndo(path: string): UndoRecord | undefined {
  try {
    const text = readFileSync(journalPath(path), "utf8");
    const record = JSON.parse(text.slice(0, text.indexOf("\n"))) as UndoRecord;
    if (!Number.isInteger(record.size) || !Array.isArray(record.restore)) return undefined;
    return record;
  } catch {
    return undefined;
  }
}

const parses = (bytes: Buffer): boolean => {
  try {
    JSON.parse(bytes.toString("utf8"));
    return true;
  } catch {
    return false;
  }
};

/**
 * Repairs a trajectory that a kill cut in the middle of an in-place write: when the file does not parse and
 * its journal puts it back into a file that does, the repaired file replaces it (atomically) and the journal
 * is removed. Returns whether it repaired the file; a file that parses, or has no usable journal, is left.
 */
export function repairTrajectory(path: string): boolean {
  const record = readUndo(path);
  if (!record) return false;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return false;
  }
  if (parses(bytes) || bytes.length < record.size) return false;
  const repaired = Buffer.from(bytes.subarray(0, record.size));
  for (const [offset, text] of record.restore) {
    const old = Buffer.from(text, "utf8");
    if (offset < 0 || offset + old.length > repaired.length) return false;
    old.copy(repaired, offset);
  }
  if (!parses(repaired)) return false;
  writeFileAtomic(path, [repaired]);
  rmSync(journalPath(path), { force: true });
  return true;
}
