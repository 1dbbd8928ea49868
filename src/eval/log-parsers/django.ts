import { pySplit, pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { LogParserError } from "./parser-error.js";
import { afterFirst, before, beforeLast, LINE_END, LINE_START, PY_SPACE } from "./python-text.js";

const PASS_SUFFIXES = [" ... ok", " ... OK", " ...  OK"];
/** django__django-7188 prints a migration line and the test's result on one line. */
const SITES_MIGRATION = "Applying sites.0002_alter_domain_unique...test_no_migrations";

const S = `[${PY_SPACE}]`;
const DOTS = `${S}\\.\\.\\.${S}`;
/**
 * A test whose `... ok` was pushed to the next line by a message printed in between (Django's runner does
 * this near the end of some runs): the message, a newline, then `ok` alone.
 */
export const INTERRUPTED_OK = [
  `${LINE_START}([^\\n]*?)${DOTS}Testing against Django installed in ([\\s\\S]*?) silenced\\)\\.\\nok${LINE_END}`,
  `${LINE_START}([^\\n]*?)${DOTS}Internal Server Error: \\/([^\\n]*)\\/\\nok${LINE_END}`,
  `${LINE_START}([^\\n]*?)${DOTS}System check identified no issues \\(0 silenced\\)\\nok${LINE_END}`,
].map((source) => new RegExp(source, "uy"));

/** Text each of those patterns needs: a log without it cannot match (and is not searched). */
export const INTERRUPTED_OK_TEXT = [
  " silenced).\nok",
  "Internal Server Error: /",
  "System check identified no issues (0 silenced)\nok",
];

/**
 * The names an interrupted-ok pattern finds, as `re.findall` over the whole log finds them, searching only
 * where a match can start: a match starts at a line start and holds its pattern's text within that line or
 * the two after (the ` ... ` around it may be line breaks), so those line starts are tried, in order, each
 * after the end of the last match.
 */
export function interruptedOk(log: string, pattern: RegExp, text: string): string[] {
  const starts: number[] = [];
  for (let at = log.indexOf(text); at !== -1; at = log.indexOf(text, at + 1)) {
    let lineStart = log.lastIndexOf("\n", at - 1) + 1;
    const lines = [lineStart];
    for (let back = 0; back < 2 && lineStart > 0; back++) {
      lineStart = lineStart >= 2 ? log.lastIndexOf("\n", lineStart - 2) + 1 : 0;
      lines.unshift(lineStart);
    }
    for (const start of lines) if (start > (starts.at(-1) ?? -1)) starts.push(start);
  }
  const names: string[] = [];
  let end = 0;
  for (const start of starts) {
    if (start < end) continue;
    pattern.lastIndex = start;
    const match = pattern.exec(log);
    if (!match) continue;
    names.push(match[1] ?? "");
    end = start + Math.max(match[0].length, 1);
  }
  return names;
}

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
    for (const name of interruptedOk(log, pattern, INTERRUPTED_OK_TEXT[index] ?? "")) map.set(name, "PASSED");
  });
  return map;
}
