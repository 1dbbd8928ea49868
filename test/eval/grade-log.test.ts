import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { gradeTestLog, LOG_PARSER_NAMES, parseTestLog } from "../../src/eval/grade-log.js";
import { LogParserError } from "../../src/eval/log-parsers/parser-error.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "eval");
interface Case {
  id: string;
  log: string;
  log_parser: string;
  version?: string;
  eval_type?: "pass_and_fail" | "fail_only";
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
}
const cases = (JSON.parse(readFileSync(join(FIXTURES, "log-grading-cases.json"), "utf8")) as Case[]).map(
  ({ id, ...rest }) => ({ instance_id: id, ...rest }),
);
type Instance = (typeof cases)[number];
/** Made by scripts/parser-logs/gen-expected.py: the harness's get_eval_report of each case's log. */
const expected = JSON.parse(readFileSync(join(FIXTURES, "expected", "log-grading.json"), "utf8")) as Record<
  string,
  { test_output: string; report: Record<string, unknown> }
>;

describe("gradeTestLog grades a log as the harness's get_eval_report does", () => {
  for (const c of cases) {
    it(c.instance_id, () => {
      const want = expected[c.instance_id];
      if (!want) throw new Error(`no expectation for ${c.instance_id}`);
      const grade = () => gradeTestLog(c, want.test_output);
      if ("error" in want.report) expect(grade).toThrow(LogParserError);
      else expect(grade()).toEqual(want.report);
    });
  }

  it("takes the lists as JSON text too, and a missing patch", () => {
    const c = cases[0] as Instance;
    const text = expected[c.instance_id]?.test_output ?? "";
    const asText = {
      ...c,
      FAIL_TO_PASS: JSON.stringify(c.FAIL_TO_PASS),
      PASS_TO_PASS: JSON.stringify(c.PASS_TO_PASS),
    };
    expect(gradeTestLog(asText, text)).toEqual(gradeTestLog(c, text));
    expect(gradeTestLog(c, text, { patch: null })).toMatchObject({ patch_is_None: true, resolved: false });
  });

  it("reads CRLF logs as the harness reads test_output.txt", () => {
    const c = cases[0] as Instance;
    const text = expected[c.instance_id]?.test_output ?? "";
    expect(gradeTestLog(c, text.replaceAll("\n", "\r\n"))).toEqual(expected[c.instance_id]?.report);
  });

  it("names the instance and the parser when the harness has no such parser", () => {
    const c = { ...(cases[0] as Instance), log_parser: "parse_log_nope" };
    expect(() => gradeTestLog(c, "")).toThrow(
      new UserError(
        'go__calc-1: unknown log parser "parse_log_nope" (the harness has no parser of that name)',
      ),
    );
    expect(() => gradeTestLog({ ...c, log_parser: "gotest", FAIL_TO_PASS: "[1" }, "")).toThrow(
      "go__calc-1: FAIL_TO_PASS must be a list of test names",
    );
  });
});

describe("parseTestLog", () => {
  const log = readFileSync(join(FIXTURES, "parser-logs", "go-calc.log"), "utf8");
  it("knows the harness's 57 names, with or without parse_log_", () => {
    expect(LOG_PARSER_NAMES).toHaveLength(57);
    expect(parseTestLog("gotest", log)).toEqual(parseTestLog("parse_log_gotest", log));
    expect(parseTestLog("gotest", log).get("TestTable/négatif_ünïcode")).toBe("PASSED");
  });

  it("refuses an unknown name and needs the instance where the harness's parser reads it", () => {
    expect(() => parseTestLog("nope", log)).toThrow('unknown log parser "nope"');
    expect(() => parseTestLog("jekyll", log)).toThrow("log parser parse_log_jekyll needs the instance");
    expect(() => parseTestLog("jekyll", log, { instance_id: "jekyll__jekyll-1" })).toThrow(
      "log parser parse_log_jekyll does not know instance jekyll__jekyll-1",
    );
  });
});
