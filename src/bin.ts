#!/usr/bin/env -S node --max-semi-space-size=4
// swerun's bin (the build writes it as dist/src/cli.cjs, CommonJS; scripts/bundle.mjs). It answers `--help` and
// `--version` itself, from text the build took from the real CLI (src/cli.ts, test/cli/bin.test.ts checks
// they are the same), so they load nothing; `swerun run` runs the CLI's one-script build with V8's code cache
// (util/code-cache.ts); everything else loads the CLI's ES modules. A 4 MiB young generation keeps a
// batch process near 90 MiB instead of ~115 (bench/batch.ts) at no measured cost.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { CommandSpawner } from "./environments/command-spawner.js";
import { cacheRoot } from "./util/cache-root.js";
import { codeCacheFile, runWithCodeCache } from "./util/code-cache.js";

/** `swerun --help`'s text and swerun's version, put here by the build. */
declare const SWERUN_HELP: string;
declare const SWERUN_VERSION: string;
/** The hash of dist/src/cli-run.cjs, which names its code cache. */
declare const SWERUN_RUN_SCRIPT_HASH: string;

const args = process.argv.slice(2);
const only = args.length === 1 ? args[0] : undefined;
if (args.length === 0 || only === "--help" || only === "-h") {
  process.stdout.write(SWERUN_HELP);
} else if (only === "--version" || only === "-v") {
  process.stdout.write(
    `swerun/${SWERUN_VERSION} ${process.platform}-${process.arch} node-${process.version}\n`,
  );
} else {
  // One run spends its time waiting for the model and its commands, not in JavaScript: without the
  // optimizing compilers its process holds ~18 MiB less (bench/lean.ts) for about the same CPU time.
  // Batches and grading (log parsers, datasets) keep them.
  if (args[0] === "run") {
    // A local run's commands go through a spawner (environments/command-spawner.ts): started first, Perl is
    // up on the other core by the time the CLI has loaded. Not for an explicit Docker or Kubernetes run.
    const remote = args.some(
      (arg, index) =>
        /^--environment-class=(docker|kubernetes)$/.test(arg) ||
        (/^(docker|kubernetes)$/.test(arg) && args[index - 1] === "--environment-class"),
    );
    if (!remote) CommandSpawner.startEarly();
    const flags = ["--no-opt", "--no-sparkplug", "--optimize-for-size"];
    for (const flag of flags) setFlagsFromString(flag);
    const script = fileURLToPath(new URL("./cli-run.cjs", import.meta.url));
    const cache = codeCacheFile(join(cacheRoot(), "code"), script, SWERUN_RUN_SCRIPT_HASH, flags);
    const state = runWithCodeCache(script, cache);
    if (process.env.SWERUN_DEBUG) process.stderr.write(`swerun: code cache ${state}: ${cache}\n`);
  } else {
    // An unhandled rejection: Node prints it and exits 1.
    void import(new URL("./cli-main.js", import.meta.url).href);
  }
}
