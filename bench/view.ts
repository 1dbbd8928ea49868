/**
 * `swerun view` on a synthetic batch folder (default 500 instances x 100 steps, evaluation reports for half):
 * generation wall time against a floor (a node process that only reads and parses every trajectory), the
 * page's size, and in headless Debian chromium the time until the overview is usable, until an instance
 * is shown, and for a search over every output, against a floor (loading a script-free HTML file of the
 * same size). Usage: node dist/bench/view.js [instances, default 500] [steps, default 100]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { packageRoot } from "../src/util/package-root.js";
import { CHROMIUM, launchChromium } from "../test/view/chromium.js";
import { syntheticTrajectory, writeEvalReport, writeParseFloor } from "./synthetic-run.js";

type Node = { textContent: string | null };

const INSTANCES = Number(process.argv[2] ?? 500);
const STEPS = Number(process.argv[3] ?? 100);
const CLI = join(packageRoot(), "dist", "src", "cli.cjs");

/** Step `step`'s ~1.5 KB output in instance `index`: it differs per step and instance (search has to look). */
const output = (index: number, step: number) =>
  Array.from(
    { length: 36 },
    (_, line) =>
      `src/module_${(index * 7 + step + line) % 97}.py:${step * 10 + line}: value_${line} = compute(${step}, ${index})`,
  ).join("\n");

function makeRunFolder(root: string): string {
  const run = join(root, "run");
  mkdirSync(run, { recursive: true });
  writeFileSync(
    join(run, "run.json"),
    JSON.stringify({ run_id: "bench", status: "finished", instances: INSTANCES, cases: {} }),
  );
  for (let index = 0; index < INSTANCES; index++) {
    const id = `owner__repo-${index + 1}`;
    const patch = `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-x = ${index}\n+x = ${index + 1}\n`;
    const trajectory = syntheticTrajectory(id, {
      steps: STEPS,
      output: (step) => output(index, step),
      modelExtra: (step) => ({
        cost: 0.0021,
        usage: { prompt_tokens: 1200 + step * 150, completion_tokens: 40 },
      }),
      exitStatus: index % 10 === 0 ? "LimitsExceeded" : "Submitted",
      submission: patch,
    });
    mkdirSync(join(run, id), { recursive: true });
    writeFileSync(join(run, id, `${id}.traj.json`), JSON.stringify(trajectory));
    if (index % 2 === 0) {
      const resolved = index % 4 === 0;
      writeEvalReport(run, id, {
        resolved,
        tests_status: {
          FAIL_TO_PASS: { success: resolved ? ["test_a"] : [], failure: resolved ? [] : ["test_a"] },
          PASS_TO_PASS: { success: ["test_b", "test_c"], failure: [] },
        },
      });
    }
  }
  return run;
}

function wall(args: string[]): number {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed: ${result.stderr}`);
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function browserTimes(page: string, floorPage: string, firstId: string) {
  const { context, close } = await launchChromium();
  try {
    const tab = await context.newPage();
    // Warm the browser once so neither measurement pays for its start-up.
    await tab.goto("about:blank");
    let started = Date.now();
    await tab.goto(pathToFileURL(floorPage).href, { waitUntil: "load" });
    const floor = (Date.now() - started) / 1000;
    started = Date.now();
    await tab.goto(pathToFileURL(page).href, { waitUntil: "commit" });
    await tab.waitForSelector("html[data-ready]", { timeout: 60_000 });
    const usable = (Date.now() - started) / 1000;
    const inPage = Number(await tab.evaluate("window.swerunReadyAt")) / 1000;
    started = Date.now();
    await tab.evaluate(`location.hash = ${JSON.stringify(`#${encodeURIComponent(firstId)}`)}`);
    await tab.waitForSelector(`#instance[data-loaded="${firstId}"]`, { timeout: 60_000 });
    const instance = (Date.now() - started) / 1000;
    started = Date.now();
    await tab.fill("#search", "value_35 = compute\\(99, 499\\)");
    await tab.check("#search-regex");
    await tab.press("#search", "Enter");
    const searching = () => {
      const doc = (globalThis as unknown as { document: { getElementById(id: string): Node | null } })
        .document;
      return !/^Searching/.test(doc.getElementById("search-status")?.textContent ?? "Searching");
    };
    await tab.waitForFunction(searching, null, { timeout: 120_000 });
    const search = (Date.now() - started) / 1000;
    return { floor, usable, inPage, instance, search };
  } finally {
    await close();
  }
}

async function main(): Promise<void> {
  // SWERUN_BENCH_KEEP=<dir> keeps the synthetic run there (to profile `swerun view` by hand).
  const keep = process.env.SWERUN_BENCH_KEEP;
  const root = keep ?? mkdtempSync(join(tmpdir(), "swerun-bench-view-"));
  try {
    const run = makeRunFolder(root);
    const size = INSTANCES * statSync(join(run, "owner__repo-1", "owner__repo-1.traj.json")).size;
    console.log(
      `${INSTANCES} instances x ${STEPS} steps, ${(size / 2 ** 20).toFixed(0)} MiB of trajectories`,
    );
    const floorScript = writeParseFloor(root);
    const floor = wall([floorScript, run]);
    const page = join(root, "index.html");
    const generate = wall([CLI, "view", run, "-o", page]);
    const pageSize = statSync(page).size;
    console.log(`floor: read + parse every trajectory     ${floor.toFixed(2)} s`);
    console.log(
      `swerun view (generate the page)         ${generate.toFixed(2)} s  (${(generate / floor).toFixed(1)}x floor)`,
    );
    console.log(
      `page size                               ${(pageSize / 2 ** 20).toFixed(1)} MiB (${((pageSize / size) * 100).toFixed(0)}% of the trajectories)`,
    );
    if (!existsSync(CHROMIUM)) {
      console.log(`no chromium at ${CHROMIUM}: browser timings skipped`);
      return;
    }
    const floorPage = join(root, "floor.html");
    writeFileSync(
      floorPage,
      `<!doctype html><title>floor</title><p>floor</p><script type="text/plain">${"x".repeat(pageSize)}</script>`,
    );
    const times = await browserTimes(page, floorPage, "owner__repo-1");
    console.log(`chromium floor: load a page of the same size (inert text)  ${times.floor.toFixed(2)} s`);
    console.log(
      `overview usable (navigation to table rendered)            ${times.usable.toFixed(2)} s  (${(times.usable / times.floor).toFixed(1)}x floor; ${times.inPage.toFixed(2)} s by the page's clock)`,
    );
    console.log(
      `open an instance (${STEPS} steps)                              ${times.instance.toFixed(2)} s`,
    );
    console.log(`regex search over every command and output                ${times.search.toFixed(2)} s`);
  } finally {
    if (!keep) rmSync(root, { recursive: true, force: true });
  }
}

await main();
