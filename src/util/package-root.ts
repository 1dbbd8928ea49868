import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let cached: string | undefined;

/** The folder holding swerun's package.json (and its `config/` and `templates/`), from source or from dist. */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === "swerun") {
      cached = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("swerun: cannot find the package root (package.json named swerun)");
    dir = parent;
  }
}

let version: string | undefined;

/** swerun's version, from its package.json (read once: every trajectory save records it). */
export function swerunVersion(): string {
  version ??= JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")).version as string;
  return version;
}
