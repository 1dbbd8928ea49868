/**
 * `json.loads` as Python reads it, for tool-call arguments: the same values (NaN and Infinity included)
 * and, for bad input, the same error text (`Expecting ',' delimiter: line 1 column 17 (char 16)`), since
 * mini-swe-agent shows that text to the model. Follows CPython's scanner step by step.
 */
export class PythonJsonError extends Error {}

const WS = new Set([" ", "\t", "\n", "\r"]);
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

class Stop {
  constructor(readonly at: number) {}
}

function fail(message: string, text: string, pos: number): never {
  const before = text.slice(0, pos);
  const line = before.split("\n").length;
  const column = pos - before.lastIndexOf("\n");
  throw new PythonJsonError(`${message}: line ${line} column ${column} (char ${pos})`);
}

function skip(text: string, at: number): number {
  let end = at;
  while (end < text.length && WS.has(text[end] as string)) end += 1;
  return end;
}

function scanString(text: string, start: number): [string, number] {
  const begin = start - 1;
  let end = start;
  let out = "";
  for (;;) {
    if (end >= text.length) fail("Unterminated string starting at", text, begin);
    const char = text[end] as string;
    end += 1;
    if (char === '"') return [out, end];
    if (char.charCodeAt(0) < 0x20) fail("Invalid control character at", text, end - 1);
    if (char !== "\\") {
      out += char;
      continue;
    }
    if (end >= text.length) fail("Unterminated string starting at", text, begin);
    const escaped = text[end] as string;
    if (escaped !== "u") {
      const value = ESCAPES[escaped];
      if (value === undefined) fail("Invalid \\escape", text, end - 1);
      out += value;
      end += 1;
      continue;
    }
    const unit = (at: number) => {
      const hex = text.slice(at, at + 4);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("Invalid \\uXXXX escape", text, at - 1);
      return Number.parseInt(hex, 16);
    };
    let code = unit(end + 1);
    end += 5;
    if (code >= 0xd800 && code <= 0xdbff && text.slice(end, end + 2) === "\\u") {
      const low = unit(end + 2);
      if (low >= 0xdc00 && low <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        end += 6;
      }
    }
    out += String.fromCodePoint(code);
  }
}

function scanOnce(text: string, at: number): [unknown, number] {
  const char = text[at];
  if (char === undefined) throw new Stop(at);
  if (char === '"') return scanString(text, at + 1);
  if (char === "{") return scanObject(text, at + 1);
  if (char === "[") return scanArray(text, at + 1);
  for (const [word, value] of [
    ["null", null],
    ["true", true],
    ["false", false],
  ] as const) {
    if (text.startsWith(word, at)) return [value, at + word.length];
  }
  NUMBER.lastIndex = at;
  const number = NUMBER.exec(text);
  if (number) return [Number(number[0]), at + number[0].length];
  if (text.startsWith("NaN", at)) return [Number.NaN, at + 3];
  if (text.startsWith("Infinity", at)) return [Number.POSITIVE_INFINITY, at + 8];
  if (text.startsWith("-Infinity", at)) return [Number.NEGATIVE_INFINITY, at + 9];
  throw new Stop(at);
}

function value(text: string, at: number): [unknown, number] {
  try {
    return scanOnce(text, at);
  } catch (error) {
    if (error instanceof Stop) fail("Expecting value", text, error.at);
    throw error;
  }
}

function scanObject(text: string, start: number): [Record<string, unknown>, number] {
  const result: Record<string, unknown> = {};
  let end = skip(text, start);
  if (text[end] === "}") return [result, end + 1];
  if (text[end] !== '"') fail("Expecting property name enclosed in double quotes", text, end);
  end += 1;
  for (;;) {
    const [key, afterKey] = scanString(text, end);
    end = skip(text, afterKey);
    if (text[end] !== ":") fail("Expecting ':' delimiter", text, end);
    const [item, afterValue] = value(text, skip(text, end + 1));
    result[key] = item;
    end = skip(text, afterValue);
    const next = text[end] ?? "";
    end += 1;
    if (next === "}") return [result, end];
    if (next !== ",") fail("Expecting ',' delimiter", text, end - 1);
    end = skip(text, end);
    if (text[end] !== '"') fail("Expecting property name enclosed in double quotes", text, end);
    end += 1;
  }
}

function scanArray(text: string, start: number): [unknown[], number] {
  const result: unknown[] = [];
  let end = skip(text, start);
  if (text[end] === "]") return [result, end + 1];
  for (;;) {
    const [item, afterValue] = value(text, end);
    result.push(item);
    end = skip(text, afterValue);
    const next = text[end] ?? "";
    end += 1;
    if (next === "]") return [result, end];
    if (next !== ",") fail("Expecting ',' delimiter", text, end - 1);
    end = skip(text, end);
  }
}

/** Python's `json.loads(text)`; throws PythonJsonError with Python's message. */
export function pythonJsonLoads(text: string): unknown {
  const [result, end] = value(text, skip(text, 0));
  const rest = skip(text, end);
  if (rest !== text.length) fail("Extra data", text, rest);
  return result;
}
