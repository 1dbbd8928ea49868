import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ParserSpec } from "../../src/eval/log-parsers/parser-spec.js";
import { LOG_PARSERS, logParser } from "../../src/eval/log-parsers/registry.js";
import { normaliseNewlines } from "../../src/eval/verdict.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "eval");
/**
 * Made by scripts/parser-logs/gen-expected.py: every log of parser-logs/ and logs/ (real runs of go test, cargo, jest,
 * vitest, mocha, rspec, ..., made by scripts/parser-logs/make-logs.sh, and logs shaped after the harness's
 * parsers) through every parser of SWE-bench 5.0.2's registry, read as the harness reads test_output.txt
 * (`text`) and, for logs with a CR, unread (`raw`). A parser the harness raises on has `{error}`.
 */
const expected = JSON.parse(readFileSync(join(FIXTURES, "expected", "parser-logs.json"), "utf8")) as {
  specs: Record<string, ParserSpec>;
  logs: Record<string, Record<string, Record<string, Array<[string, string]> | { error: string }>>>;
};

describe("every parser of the harness reads every fixture log as the harness does", () => {
  const logs = ["parser-logs", "logs"].flatMap((folder) =>
    readdirSync(join(FIXTURES, folder))
      .sort()
      .map((file) => `${folder}/${file}`),
  );
  it("has expectations for every log and every parser of the harness", () => {
    expect(Object.keys(expected.logs)).toEqual(logs);
    const names = new Set(Object.keys(expected.specs).map((key) => key.split("@")[0]));
    expect([...names].sort()).toEqual(Object.keys(LOG_PARSERS).sort());
  });
  for (const file of logs) {
    const raw = readFileSync(join(FIXTURES, file), "utf8");
    for (const [mode, cases] of Object.entries(expected.logs[file] ?? {})) {
      const log = mode === "text" ? normaliseNewlines(raw) : raw;
      it(`${file} (${mode})`, () => {
        for (const [key, want] of Object.entries(cases)) {
          const parser = logParser(key.split("@")[0] ?? "");
          if (!parser) throw new Error(`no parser ${key}`);
          const run = () => [...parser(log, expected.specs[key])];
          if (Array.isArray(want)) expect(run(), key).toEqual(want);
          else expect(run, key).toThrow();
        }
      });
    }
  }
});
