/**
 * `swerun view` on a synthetic batch folder (default 500 instances x 100 steps, evaluation reports for half):
 * generation wall time against a floor (a node process that only reads and parses every trajectory), the
 * page's size, and in headless Debian chromium the time until the overview is usable, until an instance
 * is shown, and for a search over every output, against a floor (loading a script-free HTML file of the
 * same size). Usage: node dist/bench/view.js [instances, default 500] [steps, default 100]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

type Node = { textContent: string | null };

import { packageRoot } from "../src/util/package-root.js";

const INSTANCES = Number(process.argv[2] ?? 500);
const STEPS = Number(process.argv[3] ?? 100);
const CLI = join(packageRoot(), "dist", "src", "cli.js");
const CHROMIUM = process.env.SWERUN_CHROMIUM ?? "/usr/bin/chromium";

/** One instance: `STEPS` tool-call turns with ~1.5 KB outputs that differ per step, then a submission. */
function trajectory(id: string, index: number): string {
  const source = JSON.parse(
    readFileSync(join(packageRoot(), "test", "fixtures", "report", "swerun-full.traj.json"), "utf8"),
  );
  const [system, user, assistant, tool] = source.messages as Array<Record<string, unknown>>;
  const messages: unknown[] = [
    system,
    { ...user, content: `Problem statement of ${id}\n${"text ".repeat(600)}` },
  ];
  for (let step = 1; step <= STEPS; step++) {
    const callId = `call_${step}`;
    const command =
      step % 3 === 0 ? `cd /testbed && grep -rn 'def f${step}' src | head -20` : `sed -n '${step},+40p' a.py`;
    const output = Array.from(
      { length: 36 },
      (_, line) =>
        `src/module_${(index * 7 + step + line) % 97}.py:${step * 10 + line}: value_${line} = compute(${step}, ${index})`,
    ).join("\n");
    messages.push(
      {
        ...assistant,
        content: `Step ${step}: I look at the next part of the code around f${step}.`,
        tool_calls: [
          {
            id: callId,
            type: "function",
            function: { name: "bash", arguments: JSON.stringify({ command }) },
          },
        ],
        extra: {
          ...(assistant?.extra as object),
          actions: [{ command, tool_call_id: callId }],
          cost: 0.0021,
          usage: { prompt_tokens: 1200 + step * 150, completion_tokens: 40 },
          timestamp: 1_700_000_000 + step,
        },
      },
      {
        ...tool,
        tool_call_id: callId,
        content: `<returncode>0</returncode>\n<output>\n${output}</output>`,
        extra: {
          raw_output: output,
          returncode: 0,
          exception_info: "",
          duration_s: 0.05,
          timestamp: 1_700_000_000.5 + step,
        },
      },
    );
  }
  const patch = `diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-x = ${index}\n+x = ${index + 1}\n`;
  messages.push({
    role: "exit",
    content: patch,
    extra: { exit_status: index % 10 === 0 ? "LimitsExceeded" : "Submitted", submission: patch },
  });
  return JSON.stringify({ ...source, messages, instance_id: id });
}

function makeRunFolder(root: string): string {
  const run = join(root, "run");
  mkdirSync(run, { recursive: true });
  writeFileSync(
    join(run, "run.json"),
    JSON.stringify({ run_id: "bench", status: "finished", instances: INSTANCES, cases: {} }),
  );
  for (let index = 0; index < INSTANCES; index++) {
    const id = `owner__repo-${index + 1}`;
    mkdirSync(join(run, id), { recursive: true });
    writeFileSync(join(run, id, `${id}.traj.json`), trajectory(id, index));
    if (index % 2 === 0) {
      mkdirSync(join(run, "eval", "bench", id), { recursive: true });
      const resolved = index % 4 === 0;
      writeFileSync(
        join(run, "eval", "bench", id, "report.json"),
        JSON.stringify({
          [id]: {
            resolved,
            tests_status: {
              FAIL_TO_PASS: { success: resolved ? ["test_a"] : [], failure: resolved ? [] : ["test_a"] },
              PASS_TO_PASS: { success: ["test_b", "test_c"], failure: [] },
            },
          },
        }),
      );
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
  const profile = mkdtempSync(join(tmpdir(), "swerun-bench-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    headless: true,
  });
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
    await context.close();
    rmSync(profile, { recursive: true, force: true });
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
    const floorScript = join(root, "floor.mjs");
    writeFileSync(
      floorScript,
      `import { readdirSync, readFileSync } from "node:fs";\nlet n = 0;\nfor (const e of readdirSync(process.argv[2], { withFileTypes: true, recursive: true }))\n  if (e.name.endsWith(".traj.json")) n += JSON.parse(readFileSync(e.parentPath + "/" + e.name, "utf8")).messages.length;\nconsole.log(n);\n`,
    );
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
