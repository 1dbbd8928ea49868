/**
 * A file that could not be written (a full disk, a read-only or unwritable folder, a quota), named: the
 * output the user knows (`run.json`), never the temp file an atomic write was using. `code` is the system's
 * (ENOSPC, EACCES, ...); the CLI prints the message as one line (exit code 1).
 */
export class FileWriteError extends Error {
  readonly code: string | undefined;
  readonly path: string;
  constructor(path: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | null)?.code;
    super(`could not write ${path}: ${ioReason(cause)}${code ? ` (${code})` : ""}`, { cause });
    this.name = new.target.name;
    this.code = code;
    this.path = path;
  }
}

/** `error` as the failure to write `path`: a FileWriteError (one already is keeps its own path). */
export function fileWriteError(path: string, error: unknown): FileWriteError {
  return error instanceof FileWriteError ? error : new FileWriteError(path, error);
}

/** Runs `write`; what it throws comes out as a FileWriteError naming `path`. */
export function namingFile<T>(path: string, write: () => T): T {
  try {
    return write();
  } catch (error) {
    throw fileWriteError(path, error);
  }
}

/** Why a file operation failed, in words (`no space left on device`), from the system's code. */
export function ioReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const words = code ? REASONS[code] : undefined;
  if (words) return words;
  if (code) return code;
  return error instanceof Error ? error.message : String(error);
}

const REASONS: Record<string, string> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "read-only file system",
  ENOTDIR: "a part of the path is a file, not a folder",
  ENOENT: "no such file or folder",
  EIO: "input/output error",
  EFBIG: "file too large",
  ENAMETOOLONG: "the name is too long",
};
