import { lstatSync, realpathSync, statSync } from "node:fs";

/**
 * Where a write to `path` really goes, so that an output never replaces what is not a regular file:
 * a missing path or a regular file is written in place (atomically, by the caller); a symlink to a regular
 * file is followed (the link stays); a character device or a pipe, or a symlink to one (`/dev/stdout`,
 * `/proc/self/fd/1`), is written through (`stream`). Anything else (a folder, a block device, a socket, a
 * symlink to nothing) throws an error with a code (EISDIR, EINVAL, ENOENT) and a message naming the path.
 */
export function writeTargetOf(path: string): { path: string; stream: boolean } {
  let link: import("node:fs").Stats;
  try {
    link = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { path, stream: false };
    throw error;
  }
  if (link.isFile()) return { path, stream: false };
  let target = link;
  if (link.isSymbolicLink()) {
    try {
      target = statSync(path);
    } catch {
      throw targetError("ENOENT", path, "is a symlink to nothing");
    }
    if (target.isFile()) return { path: realpathSync(path), stream: false };
  }
  if (target.isDirectory()) throw targetError("EISDIR", path, "is a directory");
  if (target.isCharacterDevice() || target.isFIFO()) return { path, stream: true };
  throw targetError("EINVAL", path, "is not a regular file, a character device or a pipe");
}

/** Why a path cannot take an output, in the words of writeTargetOf's errors. */
export class WriteTargetError extends Error {
  readonly code: string;
  readonly path: string;
  readonly reason: string;
  constructor(code: string, path: string, reason: string) {
    super(`${path}: ${reason}`);
    this.code = code;
    this.path = path;
    this.reason = reason;
  }
}

function targetError(code: string, path: string, reason: string): WriteTargetError {
  return new WriteTargetError(code, path, reason);
}
