import { mkdirSync, rmdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { mkdir, stat } from "./fd-file.js";

/**
 * `mkdir -p`, one level at a time from the deepest existing folder. Node's own recursive mkdir loops
 * forever where mkdir fails with ENOENT under an existing folder (anything under /proc); this fails at once
 * with that error instead. A path component that is a file fails with ENOTDIR. Returns the first folder it
 * made (undefined when `dir` was there), as Node's recursive mkdir does.
 */
export function makeDirsSync(dir: string): string | undefined {
  let first: string | undefined;
  for (let attempt = 1; ; attempt++) {
    const missing: string[] = [];
    for (let current = dir; ; current = dirname(current)) {
      const kind = kindOf(() => statSync(current));
      if (kind === "dir") break;
      if (kind === "other") throw notADirectory(current);
      missing.push(current);
      if (dirname(current) === current) break;
    }
    try {
      for (const path of missing.reverse()) {
        try {
          mkdirSync(path);
          first ??= path;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        }
      }
      return first;
    } catch (error) {
      if (!parentVanished(error, attempt)) throw error;
    }
  }
}

/**
 * Whether a mkdir's ENOENT may come from a parent folder that another process removed after it was looked at
 * (a parallel shard's output check undoing the folders it made): then the walk is made again, a few times.
 * Where mkdir fails with ENOENT under a folder that stays (anything under /proc), the last try's error stands.
 */
function parentVanished(error: unknown, attempt: number): boolean {
  return (error as NodeJS.ErrnoException).code === "ENOENT" && attempt < MAKE_ATTEMPTS;
}

const MAKE_ATTEMPTS = 5;

/** makeDirsSync, asynchronously. */
export async function makeDirs(dir: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const missing: string[] = [];
    for (let current = dir; ; current = dirname(current)) {
      const kind = await kindOfAsync(current);
      if (kind === "dir") break;
      if (kind === "other") throw notADirectory(current);
      missing.push(current);
      if (dirname(current) === current) break;
    }
    try {
      for (const path of missing.reverse()) {
        try {
          await mkdir(path);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        }
      }
      return;
    } catch (error) {
      if (!parentVanished(error, attempt)) throw error;
    }
  }
}

type Kind = "dir" | "other" | "missing";

function kindOf(read: () => { isDirectory(): boolean }): Kind {
  try {
    return read().isDirectory() ? "dir" : "other";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw error;
  }
}

async function kindOfAsync(path: string): Promise<Kind> {
  try {
    return (await stat(path)).isDirectory() ? "dir" : "other";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "missing";
    throw error;
  }
}

function notADirectory(path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`ENOTDIR: not a directory, mkdir '${path}'`);
  error.code = "ENOTDIR";
  error.path = path;
  return error;
}

/**
 * Undoes `makeDirsSync(dir)`, which made the folders from `made` down to `dir`: removes each, deepest first,
 * while it is empty. A folder another process has written into meanwhile (a parallel shard's output folder)
 * stays, with every folder above it.
 */
export function removeMadeDirs(made: string, dir: string): void {
  for (let current = dir; ; current = dirname(current)) {
    try {
      rmdirSync(current);
    } catch {
      return;
    }
    if (current === made || dirname(current) === current) return;
  }
}
