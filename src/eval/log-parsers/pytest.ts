import { pySplit } from "../../python/string.js";
import { type StatusMap, TEST_STATUSES } from "../harness-constants.js";
import { PY_DIGIT } from "./python-text.js";

/**
 * Parsers of pytest's `-rA` short test summary (`PASSED tests/test_x.py::test_y[1-2]`,
 * `FAILED tests/test_x.py::test_z - AssertionError: ...`), as the SWE-bench harness reads them: its
 * `pytest`, `pytest_options`, `pytest_v2` and `matplotlib` parsers.
 */

/** The first letters of the statuses: a line starting with another cannot start with a status. */
const STATUS_INITIALS = new Set(TEST_STATUSES.map((status) => status.charCodeAt(0)));
const startsWithStatus = (line: string) =>
  STATUS_INITIALS.has(line.charCodeAt(0)) && TEST_STATUSES.some((status) => line.startsWith(status));
const endsWithStatus = (line: string) => TEST_STATUSES.some((status) => line.endsWith(status));

/** `SKIPPED [3] tests/x.py:12: reason`: the `[3]` counts skips, it is not a test name. */
const SKIP_COUNT = new RegExp(`^\\[${PY_DIGIT}+\\]$`, "u");
const isSkipSummary = (status: string, name: string) => status === "SKIPPED" && SKIP_COUNT.test(name);

/**
 * The status word and the test name of a summary line, or undefined. A FAILED line's ` - ` separators
 * become spaces first, so the name is the word after the status.
 */
function summaryEntry(raw: string): [status: string, name: string] | undefined {
  if (!startsWithStatus(raw)) return undefined;
  const line = raw.startsWith("FAILED") ? raw.replaceAll(" - ", " ") : raw;
  const [status, name] = pySplit(line);
  if (status === undefined || name === undefined || isSkipSummary(status, name)) return undefined;
  return [status, name];
}

/** The harness's `pytest` parser: `<STATUS> <name>` lines. */
export function parsePytest(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    const entry = summaryEntry(line);
    if (entry) map.set(entry[1], entry[0]);
  }
  return map;
}

/** `main[option]`: the text up to the first `[`, and from there to the last `]`. */
const WITH_OPTION = /^(.*?)\[(.*)\]/;

/** The harness's `pytest_options` parser: as `pytest`, with `[/abs/path/to/file]` options shortened to `[/file]`. */
export function parsePytestOptions(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    const entry = summaryEntry(line);
    if (!entry) continue;
    const [status, name] = entry;
    const match = WITH_OPTION.exec(name);
    if (match) {
      const main = match[1] ?? "";
      let option = match[2] ?? "";
      if (option.startsWith("/") && !option.startsWith("//") && !option.includes("*"))
        option = `/${option.split("/").at(-1)}`;
      map.set(`${main}[${option}]`, status);
    } else map.set(name, status);
  }
  return map;
}

/** ANSI colour codes as the harness strips them: `[` digits `m` (the ESC goes with the control characters). */
const COLOUR = new RegExp(`\\[${PY_DIGIT}+m`, "gu");
/** The control characters 1-31 (tab and carriage return included), removed from every line. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the harness removes exactly these characters
const CONTROL = /[\u0001-\u001f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the same characters, found without a replace
const HAS_CONTROL = /[\u0001-\u001f]/;

/**
 * The harness's `pytest_v2` parser (newer pytest, coloured output): colour codes and control characters
 * removed; `<STATUS> <name with spaces>` (a FAILED line cut at ` - `), or, for older pytest,
 * `<name with spaces> <STATUS>` at the end of a line.
 */
export function parsePytestV2(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const raw of log.split("\n")) {
    let line = raw.includes("[") ? raw.replace(COLOUR, "") : raw;
    if (HAS_CONTROL.test(line)) line = line.replace(CONTROL, "");
    if (startsWithStatus(line)) {
      if (line.startsWith("FAILED")) line = line.split(" - ")[0] ?? "";
      const words = pySplit(line);
      const [status, name] = words;
      if (status !== undefined && name !== undefined && !isSkipSummary(status, name))
        map.set(words.slice(1).join(" "), status);
    } else if (endsWithStatus(line)) {
      const words = pySplit(line);
      if (words.length >= 2) map.set(words.slice(0, -1).join(" "), words.at(-1) ?? "");
    }
  }
  return map;
}

/** The harness's `matplotlib` parser: as `pytest`, with `MouseButton.LEFT`/`RIGHT` written as 1 and 3. */
export function parseMatplotlib(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const raw of log.split("\n")) {
    const entry = summaryEntry(raw.replaceAll("MouseButton.LEFT", "1").replaceAll("MouseButton.RIGHT", "3"));
    if (entry) map.set(entry[1], entry[0]);
  }
  return map;
}
