import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeEvalScript } from "../../src/eval/eval-script.js";
import type { EvalType } from "../../src/eval/harness-constants.js";
import { logParser } from "../../src/eval/log-parsers/registry.js";
import { evalReport, logsEval, normaliseNewlines, testExitCode } from "../../src/eval/verdict.js";
import { pythonJson } from "../../src/python/json-dumps-indent.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "eval");
interface Case {
  id: string;
  log?: string;
  text?: string;
  log_parser: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  eval_type: EvalType;
  patch: string | null;
}
const cases = JSON.parse(readFileSync(join(FIXTURES, "grading-cases.json"), "utf8")) as Case[];
/** Made by scripts/gen-eval-fixtures.py with the harness's get_logs_eval and get_eval_report. */
const expected = JSON.parse(readFileSync(join(FIXTURES, "expected", "grading.json"), "utf8")) as Record<
  string,
  {
    found: boolean;
    status_map: Array<[string, string]>;
    report: Record<string, unknown>;
    report_json: string;
  }
>;

describe("grading matches the harness's", () => {
  for (const c of cases) {
    it(c.id, () => {
      const raw = c.log ? readFileSync(join(FIXTURES, "logs", c.log), "utf8") : (c.text ?? "");
      const content = normaliseNewlines(raw);
      const parser = logParser(c.log_parser);
      if (!parser) throw new Error(`no parser ${c.log_parser}`);
      const want = expected[c.id];
      const { statusMap, valid } = logsEval(content, parser);
      expect(valid).toBe(want?.found);
      expect([...statusMap]).toEqual(want?.status_map);
      const report = { [c.id]: evalReport({ ...c, instance_id: c.id }, c.patch, content, parser) };
      expect(report).toEqual(want?.report);
      expect(pythonJson(report, 4)).toBe(want?.report_json);
    });
  }
});

describe("eval script", () => {
  for (const name of ["standard.sh", "no-end-marker.sh", "two-ends.sh"]) {
    it(`${name} is assembled as the harness does`, () => {
      const source = readFileSync(join(FIXTURES, "eval-scripts", name), "utf8");
      expect(makeEvalScript(source)).toBe(
        readFileSync(join(FIXTURES, "expected", "eval-scripts", name), "utf8"),
      );
    });
  }
});

describe("pieces", () => {
  it("reads the recorded exit code, in any script's digits", () => {
    expect(testExitCode(">>>>> Test Exit Code: 0\n")).toBe(0);
    expect(testExitCode(">>>>> Test Exit Code:   -2")).toBe(-2);
    expect(testExitCode(">>>>> Test Exit Code: \u0661\u0660")).toBe(10);
    expect(testExitCode("no code")).toBeUndefined();
  });

  it("writes JSON as Python's json.dumps(indent=4): non-ASCII escaped, empty containers inline", () => {
    expect(pythonJson({ a: ["é", "\u007f", "😀"], b: [], c: {} }, 4)).toBe(
      '{\n    "a": [\n        "\\u00e9",\n        "\\u007f",\n        "\\ud83d\\ude00"\n    ],\n    "b": [],\n    "c": {}\n}',
    );
  });
});
