/**
 * Python's `textwrap.wrap` as Jinja2's `wordwrap` filter calls it (`expand_tabs=False`,
 * `replace_whitespace=False`, `drop_whitespace=True`, no indents): the text is split into chunks (runs of
 * whitespace, words, and with `break_on_hyphens` the parts of hyphenated words), and chunks are packed
 * greedily into lines of at most `width` code points.
 */

import { valueError } from "./errors.js";
import { lazyRegExp } from "./lazy-regexp.js";
import { cpLength, cpSubstring, pyStrip } from "./string.js";

const WS = "[\\t\\n\\v\\f\\r ]";
const NOT_WS = "[^\\t\\n\\v\\f\\r ]";
const WORD_PUNCT = "[\\p{L}\\p{N}_!\"'&.,?]";
const LETTER = "[\\p{L}\\p{Nl}\\p{No}_]";
const WORD_CHAR = "[\\p{L}\\p{N}_]";

/**
 * textwrap's chunk pattern: whitespace; an em-dash (`--`) between words; or a word, ending at a hyphen
 * that joins two letters, at whitespace or the end, or before an em-dash.
 */
const HYPHENATED_RE = lazyRegExp(
  () =>
    new RegExp(
      `(${WS}+|(?<=${WORD_PUNCT})-{2,}(?=${WORD_CHAR})|${NOT_WS}+?(?:-(?:(?<=${LETTER}{2}-)|(?<=${LETTER}-${LETTER}-))(?=${LETTER}-?${LETTER})|(?=${WS}|$)|(?<=${WORD_PUNCT})(?=-{2,}${WORD_CHAR})))`,
      "u",
    ),
);
const SIMPLE_RE = new RegExp(`(${WS}+)`, "u");

function isBlank(chunk: string): boolean {
  return pyStrip(chunk) === "";
}

function chunksOf(text: string, breakOnHyphens: boolean): string[] {
  return text.split(breakOnHyphens ? HYPHENATED_RE() : SIMPLE_RE).filter((c) => c !== "");
}

export interface WrapOptions {
  width: number;
  breakLongWords: boolean;
  breakOnHyphens: boolean;
}

/** `textwrap.wrap(text, width, ...)`: the lines, without line ends. */
export function wrap(text: string, { width, breakLongWords, breakOnHyphens }: WrapOptions): string[] {
  if (width <= 0) throw valueError(`invalid width ${width} (must be > 0)`);
  const chunks = chunksOf(text, breakOnHyphens).reverse();
  const lines: string[] = [];
  while (chunks.length > 0) {
    const line: string[] = [];
    let len = 0;
    if (lines.length > 0 && isBlank(chunks[chunks.length - 1] ?? "")) chunks.pop();
    while (chunks.length > 0) {
      const size = cpLength(chunks[chunks.length - 1] ?? "");
      if (len + size > width) break;
      line.push(chunks.pop() ?? "");
      len += size;
    }
    const next = chunks[chunks.length - 1];
    if (next !== undefined && cpLength(next) > width) {
      const spaceLeft = width - len;
      if (breakLongWords) {
        let end = spaceLeft;
        if (breakOnHyphens && cpLength(next) > spaceLeft) {
          const hyphen = cpSubstring(next, 0, spaceLeft).lastIndexOf("-");
          if (hyphen > 0 && /[^-]/.test(next.slice(0, hyphen))) end = cpLength(next.slice(0, hyphen)) + 1;
        }
        line.push(cpSubstring(next, 0, end));
        chunks[chunks.length - 1] = cpSubstring(next, end, cpLength(next));
      } else if (line.length === 0) {
        line.push(chunks.pop() ?? "");
      }
    }
    if (line.length > 0 && isBlank(line[line.length - 1] ?? "")) line.pop();
    if (line.length > 0) lines.push(line.join(""));
  }
  return lines;
}
