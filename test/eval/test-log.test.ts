import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { decodeOutput } from "../../src/eval/container-exec.js";
import { EvalOutputSplitter } from "../../src/eval/eval-output-split.js";
import { splitEvalOutput } from "../../src/eval/eval-script.js";
import { classifyLogs, classifyWith } from "../../src/eval/infra-failure.js";
import { LogParserError } from "../../src/eval/log-parsers/parser-error.js";
import { isLineLocal, LOG_PARSERS, logParser } from "../../src/eval/log-parsers/registry.js";
import {
  fileTestLog,
  firstMatches,
  joinedFileLogs,
  type TestLog,
  TestLogWriter,
  textTestLog,
} from "../../src/eval/test-log.js";
import { evalReport, logsEval, normaliseNewlines, readLogText } from "../../src/eval/verdict.js";
import {
  clearSecretsForTests,
  REDACTED,
  redact,
  registerSecret,
  StreamRedactor,
} from "../../src/util/secrets.js";
import { tempDir } from "../helpers/tmp.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures", "eval");
const fixtureLogs = ["parser-logs", "logs"].flatMap((folder) =>
  readdirSync(join(FIXTURES, folder))
    .sort()
    .map((file) => join(FIXTURES, folder, file)),
);

afterEach(() => clearSecretsForTests());

/** `text` cut at the given lengths, in turn (the last piece holds the rest). */
function cut<T extends { length: number; subarray?: unknown; slice: (a: number, b?: number) => T }>(
  text: T,
  sizes: number[],
): T[] {
  const pieces: T[] = [];
  let from = 0;
  for (let i = 0; from < text.length; i++) {
    const size = sizes[i % sizes.length] ?? 1;
    pieces.push(text.slice(from, from + size));
    from += size;
  }
  return pieces;
}

describe("a test log graded in pieces gives what the whole log gives", () => {
  it("every line-local parser reads any line-cut pieces of every fixture log into the map of the whole log", () => {
    const parsers = Object.entries(LOG_PARSERS).filter(([, parser]) => isLineLocal(parser));
    expect(parsers.map(([name]) => name)).toContain("parse_log_pytest");
    for (const path of fixtureLogs) {
      const text = readLogText(path);
      for (const [name, parser] of parsers) {
        const whole = [...parser(text, { instance_id: "x" })];
        for (const size of [1]) {
          const merged = new Map<string, string>();
          for (const piece of textTestLog(text, size).chunks())
            for (const [test, status] of parser(piece, { instance_id: "x" })) merged.set(test, status);
          expect([...merged], `${name} on ${path} in pieces of ${size}`).toEqual(whole);
        }
      }
    }
  });

  it("every grading case of the harness grades the same from a file read in small blocks", () => {
    const cases = JSON.parse(readFileSync(join(FIXTURES, "log-grading-cases.json"), "utf8")) as Array<{
      id: string;
      log_parser: string;
      version?: string;
      eval_type?: "pass_and_fail" | "fail_only";
      FAIL_TO_PASS: string[];
      PASS_TO_PASS: string[];
    }>;
    const expected = JSON.parse(
      readFileSync(join(FIXTURES, "expected", "log-grading.json"), "utf8"),
    ) as Record<string, { test_output: string; report: Record<string, unknown> }>;
    const dir = tempDir();
    for (const c of cases) {
      const want = expected[c.id];
      const parser = logParser(c.log_parser);
      if (!want || !parser) throw new Error(`no expectation or parser for ${c.id}`);
      const path = join(dir, `${c.id}.txt`);
      writeFileSync(path, want.test_output);
      const spec = { ...c, instance_id: c.id, eval_type: c.eval_type ?? "pass_and_fail" };
      for (const log of [fileTestLog(path, 7), textTestLog(want.test_output, 1)]) {
        const grade = () => evalReport(spec, "", log, parser);
        if ("error" in want.report) expect(grade, c.id).toThrow(LogParserError);
        else expect(grade(), c.id).toEqual(want.report);
      }
    }
  });

  it("finds markers, the exit code, signs of a suite and infra signatures across piece boundaries", () => {
    const logs = [
      "+ : '>>>>> Start Test Output'\nPASSED a\n+ : '>>>>> End Test Output'\n>>>>> Test Exit Code:\n\n \n  3\n",
      ">>>>> Start Test Output\nnothing\n>>>>> End Test Output\nTest Suites:  \n\n 1 passed, 2 total\n",
      ">>>>> Start Test Output\nPASSED a\n>>>>> Start Test Output\nFAILED b\n>>>>> End Test Output\nKilled\n",
      ">>>>> Start Test Output\r\nno result\r\n>>>>> End Test Output\r\nTests:\r\n\r\n 0\ncollected 0 items\n",
      ">>>>> Start Test Output\nx\n>>>>> End Test Output\n>>>>> Test Exit Code: 0\nCannot allocate\nmemory Killed\n",
    ];
    const parser = logParser("pytest");
    if (!parser) throw new Error("no pytest parser");
    const spec = {
      instance_id: "x",
      FAIL_TO_PASS: ["a"],
      PASS_TO_PASS: [],
      eval_type: "pass_and_fail" as const,
    };
    for (const text of logs) {
      const whole = normaliseNewlines(text);
      const want = { eval: logsEval(whole, parser), report: evalReport(spec, "", whole, parser) };
      for (let size = 1; size < text.length; size += 3) {
        const log = textTestLog(text, size);
        expect({ eval: logsEval(log, parser), report: evalReport(spec, "", log, parser) }, text).toEqual(
          want,
        );
      }
    }
  });

  it("classifies two log files searched in pieces as the two texts joined by a line end", () => {
    const dir = tempDir();
    const texts = [
      ["no tests ran\r\n", "2026 - INFO - fine\n"],
      ["ok\n", "Error response from daemon: gone\n"],
      ["Killed", "\nmore\n"],
      ["", "collected 0 items"],
    ];
    for (const [index, [test, instance]] of texts.entries()) {
      const paths = [
        join(dir, `${index}-test.txt`),
        join(dir, `${index}-instance.log`),
        join(dir, "missing"),
      ];
      writeFileSync(paths[0] as string, test as string);
      writeFileSync(paths[1] as string, instance as string);
      const want = classifyLogs([normaliseNewlines(test as string), normaliseNewlines(instance as string)]);
      const log = joinedFileLogs(paths);
      expect(
        classifyWith((patterns) => firstMatches(log, patterns).map(Boolean)),
        `${index}`,
      ).toEqual(want);
    }
  });

  it("reads a file in blocks as readLogText does: CRLF and CR cut by a block, a BOM, invalid bytes", () => {
    const dir = tempDir();
    const path = join(dir, "log.txt");
    const bytes = Buffer.concat([
      Buffer.from("\ufeffone\r\ntwo\rthree\r\r\n€uro é\n"),
      Buffer.from([0xff, 0xe2, 0x82, 0x0a, 0xf0, 0x9f, 0x98, 0x80, 0x0d]),
    ]);
    writeFileSync(path, bytes);
    for (let size = 1; size <= bytes.length; size++) {
      const log: TestLog = fileTestLog(path, size);
      expect([...log.chunks()].join("\n"), `blocks of ${size}`).toBe(readLogText(path));
    }
  });
});

describe("test output written as it arrives", () => {
  const output = Buffer.concat([
    Buffer.from("\ufeffPASSED a sk-secret-value-123\n€ é 😀\r\n"),
    Buffer.from([0xff, 0xc3, 0x0a, 0xe2, 0x82, 0xac, 0xf0, 0x9f]),
    Buffer.from("tail sk-secret-value-123"),
  ]);
  const old = (bytes: Buffer, suffix: string) => redact(decodeOutput(bytes) + suffix);

  for (const secret of [false, true])
    it(`writes what decoding and redacting the whole output wrote, however it is cut${secret ? " (a secret registered)" : ""}`, () => {
      if (secret) registerSecret("sk-secret-value-123");
      const dir = tempDir();
      for (const sizes of [[1], [2, 5], [3, 1, 7], [output.length]]) {
        const path = join(dir, `out-${sizes.join("-")}.txt`);
        const writer = new TestLogWriter(path);
        for (const piece of cut(output, sizes)) writer.write(piece);
        writer.commit("\n\nTimeout error: 5 seconds exceeded.");
        expect(readFileSync(path), `pieces of ${sizes}`).toEqual(
          Buffer.from(old(output, "\n\nTimeout error: 5 seconds exceeded."), "utf8"),
        );
        expect(readFileSync(path, "utf8").includes(REDACTED)).toBe(secret);
      }
    });

  it("redacts secrets cut by piece boundaries, and never cuts a character of two UTF-16 units", () => {
    registerSecret("abcdefgh-secret");
    registerSecret("abcdefgh");
    const text = "x abcdefgh-secret y abcdefgh z 😀abcdefgh-secre 😀😀 abcdefgh-secret";
    for (const sizes of [[1], [2], [3, 5], [7, 1, 4]]) {
      const redactor = new StreamRedactor();
      const pieces = cut(text, sizes).map((piece) => redactor.push(piece));
      pieces.push(redactor.end());
      expect(pieces.join(""), `pieces of ${sizes}`).toBe(redact(text));
      for (const piece of pieces) expect(Buffer.from(piece, "utf8").toString("utf8")).toBe(piece);
    }
  });
});

describe("the tests' exec output split as it arrives", () => {
  const TOKEN = "@@swerun-0123456789abcdef@@";
  const out = (text: string) => ({ data: Buffer.from(text), stderr: false });
  const err = (text: string) => ({ data: Buffer.from(text), stderr: true });
  const scenarios = [
    [out("PASSED a\n"), err("+ x\n"), out(`\n${TOKEN}\ndiff a\n`), err(`+ y\n\n${TOKEN}\n`), out("diff b\n")],
    [err("+ bash\n"), out("no token yet\n"), out(`\n${TOKEN.slice(0, 5)}`)],
    [out(`one\n\n${TOKEN}\n`), err("late stderr\n"), out("diff\n")],
  ];

  it("gives the same output and diff however the chunks are cut (a token line cut anywhere)", () => {
    for (const chunks of scenarios) {
      const want = splitEvalOutput(chunks, TOKEN);
      for (const size of [1, 2, 3, 9]) {
        const pieces = chunks.flatMap(({ data, stderr }) =>
          cut(data, [size]).map((piece) => ({ data: piece, stderr })),
        );
        expect(splitEvalOutput(pieces, TOKEN), `pieces of ${size}`).toEqual(want);
      }
    }
  });

  it("gives the script's output as it arrives, holding only what could start a token line", () => {
    const given: string[] = [];
    const splitter = new EvalOutputSplitter(TOKEN, (data) => given.push(data.toString()));
    splitter.push(Buffer.from("first line\n"), false);
    expect(given.join("")).toBe("first line");
    splitter.push(Buffer.from("+ trace\n"), true);
    splitter.push(Buffer.from("second\n"), false);
    expect(given.join("")).toBe("first line\n+ trace");
    // Megabytes behind a stream's last bytes: those bytes are taken as the script's, nothing more waits.
    splitter.push(Buffer.alloc(5 * 1024 * 1024, "e"), true);
    expect(given.join("").length).toBe("first line\n+ trace\nsecond\n".length + 5 * 1024 * 1024);
  });
});
