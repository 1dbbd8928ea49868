import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOG_PARSERS, logParser, unsupportedParserMessage } from "../../src/eval/log-parsers/registry.js";
import { normaliseNewlines } from "../../src/eval/verdict.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "eval");
/** Made by scripts/gen-eval-fixtures.py: each sample through each parser name of the harness's registry. */
const expected = JSON.parse(readFileSync(join(FIXTURES, "expected", "parsers.json"), "utf8")) as Record<
  string,
  Record<string, Array<[string, string]>>
>;

describe("log parsers match the harness's on every sample, under every registry name", () => {
  const samples = readdirSync(join(FIXTURES, "logs")).sort();
  /** The Python parsers; test/eval/parser-logs.test.ts runs these samples through the others. */
  const names = Object.keys(expected[samples[0] ?? ""] ?? {});
  it("has expectations for every sample and every Python parser", () => {
    expect(Object.keys(expected).sort()).toEqual(samples);
    expect(names).toHaveLength(20);
    for (const sample of samples) expect(Object.keys(expected[sample] ?? {})).toEqual(names);
  });
  for (const sample of samples) {
    const log = normaliseNewlines(readFileSync(join(FIXTURES, "logs", sample), "utf8"));
    for (const name of names) {
      it(`${sample} with ${name}`, () => {
        const parser = logParser(name);
        expect(parser).toBeDefined();
        // Order included: a truncated name resolves to the first matching key.
        expect([...(parser?.(log) ?? new Map())]).toEqual(expected[sample]?.[name]);
      });
    }
  }
});

describe("log parser registry", () => {
  it("finds a parser by the harness's name or the bare one", () => {
    expect(logParser("parse_log_django")).toBe(LOG_PARSERS.parse_log_django);
    expect(logParser("sympy")).toBe(LOG_PARSERS.parse_log_sympy);
    expect(logParser("jest")).toBe(LOG_PARSERS.parse_log_jest);
    expect(logParser("parse_log_nope")).toBeUndefined();
    expect(Object.keys(LOG_PARSERS)).toHaveLength(57);
  });

  it("says a name is not one of the harness's", () => {
    expect(unsupportedParserMessage("parse_log_nope")).toBe(
      'unknown log parser "parse_log_nope" (the harness has no parser of that name)',
    );
  });
});
