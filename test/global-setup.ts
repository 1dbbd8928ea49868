import { execFileSync } from "node:child_process";
import { chmodSync } from "node:fs";
import { join } from "node:path";

/** CLI tests run the built `dist/`; build it once before the suite (tsc is incremental enough to be quick). */
export default function setup(): void {
  if (process.env.SWERUN_SKIP_BUILD === "1") return;
  const root = join(import.meta.dirname, "..");
  execFileSync(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"],
    {
      cwd: root,
      stdio: "inherit",
    },
  );
  // Rewriting dist/ drops the bin's executable bit that npm set; `npx swerun` needs it.
  chmodSync(join(root, "dist", "src", "cli.js"), 0o755);
}
