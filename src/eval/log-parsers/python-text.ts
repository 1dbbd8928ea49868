/**
 * Python's string rules, for the ported log parsers: what `str.split()`, `str.strip()` and the `\s`, `\d`
 * and `\w` of a `re` pattern mean on text. JavaScript's differ on a few characters (`\x1c`-`\x1f`, `\x85`,
 * `\ufeff`, non-ASCII digits), and a parser must read a log exactly as the harness does.
 */

/** The characters `str.isspace()` accepts (and `\s` matches): a regex character-class body. */
export const PY_SPACE =
  "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
/** `\d` of a Python str pattern (any decimal digit); use with the `u` flag. */
export const PY_DIGIT = "\\p{Nd}";
/** `\w` of a Python str pattern (letters, numbers, underscore); use with the `u` flag. */
export const PY_WORD = "[\\p{L}\\p{N}_]";

/** `s.split()`: the words between runs of whitespace, no empty strings. */
export function pySplit(s: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < s.length) {
    while (i < s.length && isPySpace(s.charCodeAt(i))) i++;
    if (i >= s.length) break;
    const start = i;
    while (i < s.length && !isPySpace(s.charCodeAt(i))) i++;
    words.push(s.slice(start, i));
  }
  return words;
}

/** Whether a UTF-16 code unit is whitespace to Python (`str.isspace()`); the fast path of the strips. */
export function isPySpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x1f);
  if (code < 0x85) return false;
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

/** `s.strip()`. */
export function pyStrip(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isPySpace(s.charCodeAt(start))) start++;
  while (end > start && isPySpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/** `s.split(separator)[0]`: the text before the first separator (all of it when there is none). */
export function before(s: string, separator: string): string {
  const index = s.indexOf(separator);
  return index === -1 ? s : s.slice(0, index);
}

/** `s.rsplit(separator, 1)[0]`: the text before the last separator. */
export function beforeLast(s: string, separator: string): string {
  const index = s.lastIndexOf(separator);
  return index === -1 ? s : s.slice(0, index);
}

/** `s.split(separator, 1)[-1]`: the text after the first separator (all of it when there is none). */
export function afterFirst(s: string, separator: string): string {
  const index = s.indexOf(separator);
  return index === -1 ? s : s.slice(index + separator.length);
}

/** In a pattern without the `m` flag: `^` and `$` of a Python `re.MULTILINE` pattern (line start, line end). */
export const LINE_START = "(?<![^\\n])";
export const LINE_END = "(?![^\\n])";

/** `\s` of a Python str pattern, as a character class. */
export const S = `[${PY_SPACE}]`;
/** `\S` of a Python str pattern. */
export const NS = `[^${PY_SPACE}]`;
/** `\w` of a Python str pattern. */
export const W = PY_WORD;
/** `\d` of a Python str pattern; use with the `u` flag. */
export const D = PY_DIGIT;
/** `.` of a Python pattern without DOTALL: any character but `\n` (JavaScript's `.` also refuses `\r`). */
export const DOT = "[^\\n]";
/** `[^\S\r\n]`: whitespace other than the two line-break characters. */
export const SPACE_NOT_BREAK =
  "[\\t\\x0b\\x0c\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";

/** `len(line) - len(line.lstrip())`: how far a line is indented, in characters. */
export function indentOf(line: string): number {
  let indent = 0;
  while (indent < line.length && isPySpace(line.charCodeAt(indent))) indent++;
  return indent;
}

/** A regex matching text whose leading character is a word character (`\w`), for `\b` after a word character. */
export const WORD_CHAR = new RegExp(`^${PY_WORD}`, "u");

/** The harness's `ansi_escape`: ESC and the one- or multi-character sequence after it. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the harness strips from ESC
const ANSI = /\x1b(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])/g;
export function ansiEscape(text: string): string {
  return text.replace(ANSI, "");
}

/**
 * `re.findall(pattern, text)` for a pattern with one group (the group's text, `""` when it did not take part)
 * or none (the whole match). The pattern must have the `g` flag.
 */
export function findAll(pattern: RegExp, text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(pattern)) found.push(match.length > 1 ? (match[1] ?? "") : match[0]);
  return found;
}

/** `float(text)` as Python reads it, or undefined where Python raises. */
export function pyFloat(text: string): number | undefined {
  const t = pyStrip(text).replaceAll(/(?<=\d)_(?=\d)/g, "");
  if (/^[+-]?(?:inf|infinity)$/i.test(t)) return t.startsWith("-") ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return Number.NaN;
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(t)) return undefined;
  return Number(t);
}

/** `s.rstrip()`. */
export function pyRstrip(s: string): string {
  let end = s.length;
  while (end > 0 && isPySpace(s.charCodeAt(end - 1))) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** `re.sub(r"\s+", " ", s).strip()`: runs of whitespace made one space, the ends trimmed. */
export function squash(s: string): string {
  return pyStrip(s.replace(SPACES_GLOBAL, " "));
}
const SPACES_GLOBAL = new RegExp(`[${PY_SPACE}]+`, "g");
