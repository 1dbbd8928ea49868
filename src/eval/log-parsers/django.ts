import type { StatusMap } from "../harness-constants.js";
import {
  afterFirst,
  before,
  beforeLast,
  LINE_END,
  LINE_START,
  PY_SPACE,
  pySplit,
  pyStrip,
} from "./python-text.js";

/** A parser met a line it cannot read (the harness's parser raises there too, and the instance errors). */
export class LogParserError extends Error {
  override name = "LogParserError";
}

const PASS_SUFFIXES = [" ... ok", " ... OK", " ...  OK"];
/** django__django-7188 prints a migration line and the test's result on one line. */
const SITES_MIGRATION = "Applying sites.0002_alter_domain_unique...test_no_migrations";

const S = `[${PY_SPACE}]`;
const DOTS = `${S}\\.\\.\\.${S}`;
/**
 * A test whose `... ok` was pushed to the next line by a message printed in between (Django's runner does
 * this near the end of some runs): the message, a newline, then `ok` alone.
 */
const INTERRUPTED_OK = [
  `${LINE_START}([^\\n]*?)${DOTS}Testing against Django installed in ([\\s\\S]*?) silenced\\)\\.\\nok${LINE_END}`,
  `${LINE_START}([^\\n]*?)${DOTS}Internal Server Error: \\/([^\\n]*)\\/\\nok${LINE_END}`,
  `${LINE_START}([^\\n]*?)${DOTS}System check identified no issues \\(0 silenced\\)\\nok${LINE_END}`,
].map((source) => new RegExp(source, "gu"));

/** Text each of those patterns needs: a log without it cannot match (and is not searched). */
const INTERRUPTED_OK_TEXT = [
  " silenced).\nok",
  "Internal Server Error: /",
  "System check identified no issues (0 silenced)\nok",
];

/** The word after the first, as `line.split()[1].strip()`; a line without one cannot be read. */
function secondWord(line: string): string {
  const word = pySplit(line)[1];
  if (word === undefined) throw new LogParserError(`django log parser: no test name in "${line}"`);
  return pyStrip(word);
}

/**
 * The harness's `django` parser, for Django's own test runner at verbosity 2: `test_x (module.Class) ... ok`
 * (also `OK`, `skipped '...'`, `FAIL`, `ERROR`), the `FAIL: name` / `ERROR: name` headers of the failure
 * report, and `ok` on a line of its own for the last test named with ` ... `.
 */
export function parseDjango(log: string): StatusMap {
  const map: StatusMap = new Map();
  let previous: string | undefined;
  for (const raw of log.split("\n")) {
    let line = pyStrip(raw);
    if (line.includes("--version is equivalent to version"))
      map.set("--version is equivalent to version", "PASSED");
    if (line.includes(" ... ")) previous = before(line, " ... ");
    for (const suffix of PASS_SUFFIXES) {
      if (line.endsWith(suffix)) {
        if (pyStrip(line).startsWith(SITES_MIGRATION)) line = pyStrip(afterFirst(line, "..."));
        map.set(beforeLast(line, suffix), "PASSED");
        break;
      }
    }
    if (line.includes(" ... skipped")) map.set(before(line, " ... skipped"), "SKIPPED");
    if (line.endsWith(" ... FAIL")) map.set(before(line, " ... FAIL"), "FAILED");
    if (line.startsWith("FAIL:")) map.set(secondWord(line), "FAILED");
    if (line.endsWith(" ... ERROR")) map.set(before(line, " ... ERROR"), "ERROR");
    if (line.startsWith("ERROR:")) map.set(secondWord(line), "ERROR");
    if (line.startsWith("ok") && previous !== undefined) map.set(previous, "PASSED");
  }
  INTERRUPTED_OK.forEach((pattern, index) => {
    if (!log.includes(INTERRUPTED_OK_TEXT[index] ?? "")) return;
    for (const match of log.matchAll(pattern)) map.set(match[1] ?? "", "PASSED");
  });
  return map;
}
