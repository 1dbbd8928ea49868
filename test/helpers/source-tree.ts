import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "./tmp.js";

/** A fake src/ tree with these files, for the source checks (scripts/check-*.mjs). */
export function sourceTree(files: Record<string, string>): string {
  const src = join(tempDir(), "src");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(src, path)), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  return src;
}
