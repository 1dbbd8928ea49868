import { pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { DOT, NS, S } from "./python-text.js";

/** The harness's parsers of Java builds: Maven (one run per test), Ant's JUnit task, Gradle (patched output). */

/** `mvn test -Dtest=FooTest#bar`: the traced command names the test (the eval script runs under `set -x`). */
const MAVEN_TEST = new RegExp(`^${DOT}*-Dtest=(${NS}+)${DOT}*$`, "u");
const MAVEN_RESULT = new RegExp(`^${DOT}*BUILD (SUCCESS|FAILURE)$`, "u");

/**
 * The harness's `maven` parser: each `-Dtest=` command pairs with the next `BUILD SUCCESS/FAILURE`, first in
 * first out; results seen before any command pair with commands still waiting at the end.
 */
export function parseMaven(log: string): StatusMap {
  const map: StatusMap = new Map();
  const pending: string[] = [];
  const unmatched: string[] = [];
  const record = (name: string, result: string) => map.set(name, result === "SUCCESS" ? "PASSED" : "FAILED");
  let nextPending = 0;
  let nextUnmatched = 0;
  for (const raw of log.split("\n")) {
    if (!raw.includes("-Dtest=") && !raw.includes("BUILD ")) continue;
    const line = pyStrip(raw);
    const test = MAVEN_TEST.exec(line);
    if (test) pending.push(test[1] ?? "");
    const result = MAVEN_RESULT.exec(line);
    if (!result) continue;
    if (nextPending < pending.length) record(pending[nextPending++] ?? "", result[1] ?? "");
    else unmatched.push(result[1] ?? "");
  }
  while (nextPending < pending.length && nextUnmatched < unmatched.length)
    record(pending[nextPending++] ?? "", unmatched[nextUnmatched++] ?? "");
  return map;
}

const ANT_LINE = new RegExp(`^${S}*\\[junit\\]${S}+\\[(PASS|FAIL|ERR)\\]${S}+(${DOT}*)$`, "u");

/** The harness's `ant` parser: `[junit] [PASS] name` (FAIL and ERR both failed). */
export function parseAnt(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("[junit]")) continue;
    const match = ANT_LINE.exec(pyStrip(line));
    if (match) map.set(match[2] ?? "", match[1] === "PASS" ? "PASSED" : "FAILED");
  }
  return map;
}

const GRADLE_FULL = new RegExp(`^([^>]${DOT}+)${S}+(PASSED|FAILED)$`, "u");
const GRADLE_NAME = new RegExp(`^([^>]${NS}*${S}+>${S}+${NS}+)$`, "u");
const GRADLE_STATUS = /^(PASSED|FAILED)$/;

/**
 * The harness's `gradle_custom` parser: `Class > method PASSED`, or the name alone on a line and its status
 * alone on a later one (other output in between).
 */
export function parseGradleCustom(log: string): StatusMap {
  const map: StatusMap = new Map();
  let pending: string | undefined;
  for (const raw of log.split("\n")) {
    const line = pyStrip(raw);
    const full = GRADLE_FULL.exec(line);
    if (full) {
      map.set(full[1] ?? "", full[2] ?? "");
      pending = undefined;
      continue;
    }
    const name = GRADLE_NAME.exec(line);
    if (name) {
      pending = name[1];
      continue;
    }
    if (pending !== undefined) {
      const status = GRADLE_STATUS.exec(line);
      if (status) {
        map.set(pending, status[1] ?? "");
        pending = undefined;
      }
    }
  }
  return map;
}
