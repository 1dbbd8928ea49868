import { pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { LogParserError } from "./parser-error.js";
import { D, DOT, NS, S } from "./python-text.js";
import { parseXml, type XmlElement } from "./xml.js";

/** The harness's parsers of C and C++ suites: redis/valkey, jq, doctest, micropython, googletest. */

/** `[ok]: name (3 ms)`: the Tcl suite of redis and valkey (ok, err, skip, ignore). */
const REDIS_LINE = new RegExp(
  `^\\[(ok|err|skip|ignore)\\]:${S}(${DOT}+?)(?:${S}\\((${D}+${S}*m?s)\\))?$`,
  "u",
);
/** ` in tests/unit/x.tcl` at the end of a failed test's name. */
const REDIS_WHERE = new RegExp(`${S}+in${S}+${NS}+$`, "u");

/** The harness's `redis` parser; a failed test's name loses its ` in <file>`. */
export function parseRedis(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("]:")) continue;
    const match = REDIS_LINE.exec(pyStrip(line));
    if (!match) continue;
    const name = match[2] ?? "";
    if (match[1] === "ok") map.set(name, "PASSED");
    else if (match[1] === "err") map.set(name.replace(REDIS_WHERE, ""), "FAILED");
    else map.set(name, "SKIPPED");
  }
  return map;
}

const JQ_LINE = new RegExp(`^${S}*(PASS|FAIL):${S}(${DOT}+)$`, "u");

/** The harness's `jq` parser: automake's `PASS: tests/x.test` and `FAIL: ...` lines. */
export function parseJq(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes(":")) continue;
    const match = JQ_LINE.exec(pyStrip(line));
    if (match) map.set(match[2] ?? "", match[1] === "PASS" ? "PASSED" : "FAILED");
  }
  return map;
}

const descendants = (element: XmlElement, tag: string): XmlElement[] => {
  const found: XmlElement[] = [];
  const walk = (node: XmlElement) => {
    for (const child of node.children) {
      if (child.tag === tag) found.push(child);
      walk(child);
    }
  };
  walk(element);
  return found;
};

/**
 * The harness's `doctest` parser (test binary run with `-s -r=xml`): the XML from `<doctest` to the next
 * `</doctest>`; each SubCase (at any depth) of each TestCase is `<test case> > <subcase>`, passed when every
 * Expression under it succeeded. Malformed XML throws, as the harness's parser does.
 */
export function parseDoctest(log: string): StatusMap {
  const map: StatusMap = new Map();
  const start = log.indexOf("<doctest");
  if (start === -1) return map;
  const end = log.indexOf("</doctest>", start);
  // The harness slices to `find(...) + len(...)` = 9 then, which no XML parser accepts.
  if (end === -1) throw new LogParserError("doctest XML report has no </doctest>");
  const root = parseXml(log.slice(start, end + "</doctest>".length));
  for (const testCase of descendants(root, "TestCase")) {
    for (const subCase of descendants(testCase, "SubCase")) {
      const name = `${testCase.attributes.get("name") ?? "None"} > ${subCase.attributes.get("name") ?? "None"}`;
      const passed = descendants(subCase, "Expression").every(
        (expression) => expression.attributes.get("success") === "true",
      );
      map.set(name, passed ? "PASSED" : "FAILED");
    }
  }
  return map;
}

const MICROPYTHON_LINE = new RegExp(`^(pass|FAIL|skip)${S}+(${DOT}+)$`, "u");
const MICROPYTHON_STATUS: Record<string, string> = { pass: "PASSED", FAIL: "FAILED", skip: "SKIPPED" };

/** The harness's `micropython_test` parser: run-tests.py's `pass basics/x.py` lines. */
export function parseMicropythonTest(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("pass") && !line.includes("FAIL") && !line.includes("skip")) continue;
    const match = MICROPYTHON_LINE.exec(pyStrip(line));
    if (match) map.set(match[2] ?? "", MICROPYTHON_STATUS[match[1] ?? ""] ?? "");
  }
  return map;
}

const GTEST_LINE = new RegExp(`^${DOT}*\\[${S}*(OK|FAILED)${S}*\\]${S}(${DOT}*)${S}\\(${DOT}*\\)$`, "u");

/** The harness's `googletest` parser: `[       OK ] Suite.Test (0 ms)` and `[  FAILED  ] Suite.Test (1 ms)`. */
export function parseGoogletest(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("]")) continue;
    const match = GTEST_LINE.exec(pyStrip(line));
    if (match) map.set(match[2] ?? "", match[1] === "OK" ? "PASSED" : "FAILED");
  }
  return map;
}
