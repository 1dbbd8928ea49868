import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Script } from "node:vm";

/** What became of a script's code cache: used, absent (first run), or rejected by V8 (and then rewritten). */
export type CodeCacheState = "used" | "absent" | "rejected";

/** A code cache file no run has written for this long is removed when another one is written. */
const STALE_MS = 7 * 24 * 3600 * 1000;

/** FNV-1a of a string, in base 36: names the Node flags a cache was made under. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36);
}

/**
 * The cache file of `script` (whose content has the hash `version`): V8 accepts a code cache only from the
 * same V8 with the same flags, so the file is named by Node's version, the platform and the flags too.
 */
export function codeCacheFile(
  dir: string,
  script: string,
  version: string,
  flags: readonly string[],
): string {
  const node = `${process.version}-${process.platform}-${process.arch}`;
  const options = shortHash([...process.execArgv, process.env.NODE_OPTIONS ?? "", ...flags].join("\n"));
  return join(dir, `${basename(script, ".cjs")}-${version}-${node}-${options}.bin`);
}

/** Writes the code V8 compiled for `script` so far (atomically), and removes stale caches beside it. */
function saveCodeCache(script: Script, file: string): void {
  try {
    const dir = dirname(file);
    mkdirSync(dir, { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, file);
    const now = Date.now();
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (path !== file && now - statSync(path).mtimeMs > STALE_MS) rmSync(path, { force: true });
    }
  } catch {
    // A cache that cannot be written only costs the next start its compile time.
  }
}

/**
 * Runs a CommonJS script the build wrapped in a function of (exports, require, module, __filename, __dirname,
 * its file URL), compiled with V8's code cache from `cacheFile` when V8 accepts it. Otherwise it compiles it
 * from its source and, when the process exits (so the cache holds every function the run compiled), writes
 * the cache for the next start. Returns what became of the cache.
 */
export function runWithCodeCache(file: string, cacheFile: string): CodeCacheState {
  // The build keeps the script ASCII: read as latin1, it is a one-byte string made without decoding.
  const source = readFileSync(file, "latin1");
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {}
  const script = new Script(source, { filename: file, cachedData });
  const state = cachedData === undefined ? "absent" : script.cachedDataRejected ? "rejected" : "used";
  if (state !== "used") process.once("exit", () => saveCodeCache(script, cacheFile));
  const body = script.runInThisContext() as (...args: unknown[]) => void;
  const module = { exports: {} };
  body(module.exports, createRequire(file), module, file, dirname(file), pathToFileURL(file).href);
  return state;
}
