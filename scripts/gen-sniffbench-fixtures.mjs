#!/usr/bin/env node
// Expected sniffbench values for swerun's tests, made by sniffbench's own functions (seed 004).
//
//   npm run build && node scripts/gen-sniffbench-fixtures.mjs <unpacked sniffbench-be4326b dir>
//
// It transpiles (vite's transformWithOxc, vitest's own dependency: types dropped) and runs, unchanged:
//   src/metrics/behavior.ts       computeBehaviorMetrics, on the facts of test/fixtures/report/*.traj.json
//                                 mapped as swerun maps them (a command is a tool call, a read-only command
//                                 is a `Read`, each call's duration), and on hand-made edge cases;
//   src/cli/commands/compare.ts   formatMetricDelta (chalk as identity) and formatDate;
//   src/cli/commands/runs.ts      formatDate (the list's and show's date with time), with TZ=UTC.
// and writes test/fixtures/runs/sniffbench.json. Do not edit that file by hand: run this again.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { transformWithOxc } from "vite";

process.env.TZ = "UTC";
const root = resolve(process.argv[2] ?? "");
const here = resolve(new URL("..", import.meta.url).pathname);
const { readRunFacts } = await import(pathToFileURL(join(here, "dist/src/facts/read-run.js")).href);
const { isReadOnlyCommand } = await import(pathToFileURL(join(here, "dist/src/facts/command-name.js")).href);

const transpile = async (source) => (await transformWithOxc(source, "source.ts", { lang: "ts" })).code;

/** A top-level function of a source file, by name, transpiled and evaluated with `chalk` as identity. */
async function functionOf(file, name) {
  const source = readFileSync(join(root, file), "utf8");
  const start = source.indexOf(`function ${name}(`);
  if (start < 0) throw new Error(`${file}: no function ${name}`);
  let depth = 0;
  let end = source.indexOf("{", start);
  for (let i = end; i < source.length; i++) {
    if (source[i] === "{") depth += 1;
    if (source[i] === "}" && --depth === 0) {
      end = i + 1;
      break;
    }
  }
  const identity = (text) => String(text);
  const chalk = new Proxy(identity, { get: () => chalk });
  return new Function("chalk", `${await transpile(source.slice(start, end))}\nreturn ${name};`)(chalk);
}

const tmp = mkdtempSync(join(tmpdir(), "sniffbench-"));
const behaviorJs = join(tmp, "behavior.mjs");
writeFileSync(behaviorJs, await transpile(readFileSync(join(root, "src/metrics/behavior.ts"), "utf8")));
const { computeBehaviorMetrics } = await import(pathToFileURL(behaviorJs).href);

/** An instance's facts as sniffbench's AgentResult: its token counts, its cost, one tool call per command. */
function agentResult(facts) {
  const calls = facts.turns.flatMap((turn) => turn.tool_calls);
  return {
    tokens: {
      inputTokens: facts.tokens.input,
      outputTokens: facts.tokens.completion,
      cacheReadTokens: facts.tokens.cache_read,
      cacheWriteTokens: facts.tokens.cache_write,
      totalTokens: facts.tokens.input + facts.tokens.completion,
    },
    costUsd: facts.cost ?? 0,
    toolCalls: calls.map((call) => ({
      name: isReadOnlyCommand(call.command) ? "Read" : "Bash",
      durationMs: call.duration_s === null ? undefined : call.duration_s * 1000,
    })),
  };
}

const trajectories = ["swerun-full.traj.json", "swerun-interrupted.traj.json"];
const metrics = trajectories.map((name) => ({
  trajectory: `test/fixtures/report/${name}`,
  behaviorMetrics: computeBehaviorMetrics(agentResult(readRunFacts(join(here, "test/fixtures/report", name)))),
}));
const edge = [
  { tokens: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 0 }, costUsd: 0, toolCalls: [] },
  {
    tokens: { inputTokens: 1200, outputTokens: 300, cacheReadTokens: 900, cacheWriteTokens: 100, totalTokens: 1500 },
    costUsd: 0.123456,
    toolCalls: [{ name: "Read", durationMs: 250 }, { name: "Bash" }, { name: "Read", durationMs: 1000.6 }],
  },
].map((result) => ({ input: result, behaviorMetrics: computeBehaviorMetrics(result) }));

const formatMetricDelta = await functionOf("src/cli/commands/compare.ts", "formatMetricDelta");
const compareDate = await functionOf("src/cli/commands/compare.ts", "formatDate");
const runsDate = await functionOf("src/cli/commands/runs.ts", "formatDate");
const deltas = [
  [0, 0, true],
  [0, 5, true],
  [100, 100, true],
  [100, 85, true],
  [100, 115, true],
  [0.0052, 0.0074, true],
  [3, 1, true],
  [8.5, 9, false],
  [9, 7, false],
  [1234567, 1, true],
].map(([oldValue, newValue, lowerIsBetter]) => ({
  old: oldValue,
  new: newValue,
  lowerIsBetter,
  text: formatMetricDelta(oldValue, newValue, lowerIsBetter),
}));
const dates = ["2025-12-11T22:59:36.054Z", "2025-01-02T00:05:00.000Z", "2026-07-04T12:00:00Z"].map((iso) => ({
  iso,
  compare: compareDate(iso),
  runs: runsDate(iso),
}));

const out = join(here, "test/fixtures/runs");
mkdirSync(out, { recursive: true });
writeFileSync(
  join(out, "sniffbench.json"),
  `${JSON.stringify({ source: "sniffbench be4326b", timeZone: "UTC", metrics, edge, deltas, dates }, null, 2)}\n`,
);
process.stdout.write(`wrote ${join(out, "sniffbench.json")}\n`);
