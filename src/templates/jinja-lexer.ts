/**
 * Jinja2 lexing rules the nunjucks tokenizer lacks, installed on one tokenizer instance at a time (never
 * on nunjucks' shared prototype): Python string escapes and `}` inside `{{ {...} }}`.
 */

import { T, type Token, type Tokenizer } from "./nunjucks-internals.js";

const ESCAPE_RE = /\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|\n|[\s\S])/g;
const SIMPLE_ESCAPES: Record<string, string> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\n": "",
};

/** Python's `unicode_escape` decoding of a string literal body (unknown escapes keep the backslash). */
export function unescapePython(raw: string): string {
  if (!raw.includes("\\")) return raw;
  return raw.replace(ESCAPE_RE, (whole, esc: string) => {
    const simple = SIMPLE_ESCAPES[esc];
    if (simple !== undefined) return simple;
    if (/^[0-7]/.test(esc)) return String.fromCodePoint(Number.parseInt(esc, 8));
    if (esc.length > 1) return String.fromCodePoint(Number.parseInt(esc.slice(1), 16));
    return whole;
  });
}

/** Replacement for the tokenizer's string reader: keep escapes raw, then decode them like Python. */
function parseJinjaString(this: Tokenizer, delimiter: string): string {
  this.forward();
  let raw = "";
  while (!this.isFinished() && this.current() !== delimiter) {
    if (this.current() === "\\") {
      raw += "\\";
      this.forward();
      if (this.isFinished()) break;
    }
    raw += this.current();
    this.forward();
  }
  this.forward();
  return unescapePython(raw);
}

/**
 * Like Jinja2's lexer, treats `}` as a closing brace while a `{` is open inside a tag, so that
 * `{{ {'a': {'b': 1}} }}` works (nunjucks would end the tag at the first `}}`).
 */
function balanceBraces(tokens: Tokenizer): void {
  const next = tokens.nextToken;
  let depth = 0;
  tokens.nextToken = function (this: Tokenizer): Token | null {
    if (this.in_code && depth > 0 && this.current() === "}") {
      const tok = { type: T.RIGHT_CURLY, value: "}", lineno: this.lineno, colno: this.colno };
      this.forward();
      depth--;
      return tok;
    }
    const tok = next.call(this);
    if (tok?.type === T.LEFT_CURLY) depth++;
    else if (tok?.type === T.RIGHT_CURLY) depth--;
    else if (tok?.type === T.BLOCK_END || tok?.type === T.VARIABLE_END) depth = 0;
    return tok;
  };
}

/** Makes a freshly created tokenizer read Jinja2 source. */
export function jinjaTokenizer(tokens: Tokenizer): void {
  tokens._parseString = parseJinjaString;
  balanceBraces(tokens);
}
