import { pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { before, W } from "./python-text.js";

const TEST_LINE = /\[(smoke|unit)\]/;
/** Temporary files and folders, numbered in the order first seen (their random names differ run to run). */
const TEMP_PATHS = [`/tmp/(${W}+)\\.qmd`, `/tmp/(${W}+)/`].map((source) => ({
  first: new RegExp(source, "u"),
  all: new RegExp(source, "gu"),
}));
const RESULTS: Array<[string, string]> = [
  ["32mok", "PASSED"],
  ["31mFAILED", "FAILED"],
];

/**
 * The harness's `quarto_cli` parser (Deno's test output): the `[smoke]`/`[unit]` lines up to `ERRORS` or
 * `failures:`; a test is the text before `...` (temporary paths numbered), passed on a green `ok`, failed on
 * a red `FAILED` or no result; summary and INFO lines do not count.
 */
export function parseQuartoCli(log: string): StatusMap {
  const map: StatusMap = new Map();
  const temps = new Map<string, number>();
  for (const raw of log.split("\n")) {
    if (raw.includes("ERRORS") || raw.includes("failures:")) break;
    if (!TEST_LINE.test(raw)) continue;
    let line = raw;
    for (const { first, all } of TEMP_PATHS) {
      if (!line.includes("/tmp/")) break;
      const match = first.exec(line);
      if (!match) continue;
      if (!temps.has(match[0])) temps.set(match[0], temps.size);
      line = line.replace(all, `/tmp/${temps.get(match[0])}`);
    }
    const name = pyStrip(before(line, "..."));
    const rejected =
      line.startsWith("test result:") ||
      (line.includes("passed") && line.includes("failed") && line.includes("steps")) ||
      line.includes("34mINFO");
    const result = RESULTS.find(([marker]) => line.includes(marker));
    if (result && !rejected) map.set(name, result[1]);
    if (!map.has(name) && !rejected) map.set(name, "FAILED");
  }
  return map;
}
