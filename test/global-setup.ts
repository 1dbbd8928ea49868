import { execFileSync } from "node:child_process";
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
  // The CLI the tests run is the bundle `npm run build` ships (scripts/bundle.mjs also sets its executable bit).
  execFileSync(process.execPath, [join(root, "scripts", "bundle.mjs")], { cwd: root, stdio: "inherit" });
}
