import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * A cheap fingerprint of what a page is built from: names, sizes and times of the run folders' files
 * (trajectories, run.json, eval reports), two levels deep plus the eval folder, leaving out `ignore` (the
 * page itself) and dot-files (temporary files of atomic writes). A change means rebuild.
 */
export function folderStamp(paths: string[], ignore: string[] = []): string {
  const parts: string[] = [];
  const visit = (dir: string, depth: number, deep: boolean) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.name.startsWith(".") || ignore.includes(path)) continue;
      if (entry.isDirectory()) {
        if (deep) visit(path, depth + 1, true);
        else if (depth === 0) visit(path, 1, entry.name === "eval");
        continue;
      }
      try {
        const stat = statSync(path);
        parts.push(`${path}:${stat.size}:${stat.mtimeMs}`);
      } catch {
        // renamed away between listing and stat
      }
    }
  };
  for (const path of paths) {
    try {
      if (statSync(path).isDirectory()) visit(path, 0, false);
      else parts.push(`${path}:${statSync(path).size}:${statSync(path).mtimeMs}`);
    } catch {
      parts.push(`${path}:missing`);
    }
  }
  return parts.sort().join("\n");
}

/**
 * Calls `rebuild` whenever the stamp of `paths` changes, checking every `intervalMs`, until `signal` aborts.
 * Polling works the same on every file system (network mounts and containers included).
 */
export async function watchFolders(
  paths: string[],
  ignore: string[],
  rebuild: () => void,
  signal: AbortSignal,
  intervalMs = 1000,
): Promise<void> {
  let last = folderStamp(paths, ignore);
  while (!signal.aborted) {
    // One listener per wait, removed when the wait ends (they would pile up on the signal otherwise).
    await new Promise<void>((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      }, intervalMs);
      signal.addEventListener("abort", onAbort, { once: true });
    });
    if (signal.aborted) return;
    const stamp = folderStamp(paths, ignore);
    if (stamp === last) continue;
    last = stamp;
    rebuild();
  }
}
