#!/usr/bin/env node
// Generates test/fixtures/harness/ from the ACP harness's own writers (seed 001), run under Node once:
// its formatSummary, formatJudgeMarkdown and formatFullWithStepIds (scripts/run-harness.ts at commit 1cb3fbc,
// in ../shared/reference/acp-harness-1cb3fbc.tar.gz) are cut out of the script (which otherwise needs Bun and an
// ACP agent), stripped of their types by tsc, and fed the FullResult records of swerun's golden judge exports
// (test/fixtures/report/*.judge.full.jsonl, step ids removed). Nothing of the harness is kept but its outputs.
// Usage: node scripts/harness-fixtures.mjs [path/to/acp-harness-1cb3fbc.tar.gz]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const tarball = process.argv[2] ?? join(root, "..", "..", "shared", "reference", "acp-harness-1cb3fbc.tar.gz");
const work = mkdtempSync(join(tmpdir(), "swerun-harness-"));
execFileSync("tar", ["xzf", tarball, "-C", work]);
const source = readFileSync(
  join(work, "acp-harness-1cb3fbc", ".claude", "skills", "acp-harness", "scripts", "run-harness.ts"),
  "utf8",
);
const cut = (from, to) => source.slice(source.indexOf(from), source.indexOf(to));
const code = [
  "// @ts-nocheck",
  cut("const ToolInputSchema", "// ============================================================================\n// Types"),
  cut("/** Head/tail preview configuration */", "/** Format result based on output format"),
  cut("/** Format result as full JSONL with step IDs", "/** Write output line"),
  "export { formatSummary, formatJudgeMarkdown, formatFullWithStepIds };",
].join("\n");
writeFileSync(join(work, "writers.ts"), code);
execFileSync(join(root, "node_modules", ".bin", "tsc"), [
  "--target",
  "es2022",
  "--module",
  "esnext",
  "--noCheck",
  "--outDir",
  join(work, "out"),
  join(work, "writers.ts"),
], { cwd: work });
const js = readFileSync(join(work, "out", "writers.js"), "utf8").replace(/^export \{[^}]*\};?$/m, "");
const { z } = createRequire(join(root, "package.json"))("zod");
const writers = new Function("z", `${js}\nreturn { formatSummary, formatJudgeMarkdown, formatFullWithStepIds };`)(z);

for (const name of ["swerun-full", "swerun-interrupted", "mini-swe-agent", "bare-list"]) {
  const records = readFileSync(join(root, "test", "fixtures", "report", `${name}.judge.full.jsonl`), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  // The records as the harness holds them: the same keys in the same order, steps without their ids.
  const results = records.map((record) =>
    Object.fromEntries(
      Object.entries(record).map(([key, value]) =>
        key === "trajectory" ? [key, value.map(({ stepId, ...step }) => step)] : [key, value],
      ),
    ),
  );
  const out = join(root, "test", "fixtures", "harness", name);
  writeFileSync(`${out}.summary.jsonl`, results.map((result) => `${writers.formatSummary(result)}\n`).join(""));
  writeFileSync(`${out}.judge.md`, results.map((result) => `${writers.formatJudgeMarkdown(result)}\n`).join(""));
  writeFileSync(`${out}.full.jsonl`, results.map((result) => `${writers.formatFullWithStepIds(result)}\n`).join(""));
}
process.stderr.write(`wrote test/fixtures/harness/ from ${tarball}\n`);
