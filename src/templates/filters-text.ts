/**
 * Jinja2's string filters whose logic is more than a line: `indent`, `truncate`, `title`, `wordcount`,
 * `wordwrap`, `format` (the one-liners are written out in the table in filters.ts).
 */

import { splitArgs } from "../python/args.js";
import { PyError } from "../python/errors.js";
import { percentFormat } from "../python/format.js";
import { isNumeric, numValue } from "../python/number.js";
import { truthy } from "../python/ops.js";
import { codePoints, cpLength, pySplitlines } from "../python/string.js";
import { wrap } from "../python/textwrap.js";
import { isStr, makeTuple, pyStr } from "../python/values.js";

export function indent(s: string, width: unknown, first: unknown, blank: unknown): string {
  const indention = isStr(width) ? width.toString() : " ".repeat(isNumeric(width) ? numValue(width) : 4);
  const lines = pySplitlines(`${s}\n`);
  let rv: string;
  if (truthy(blank)) rv = lines.join(`\n${indention}`);
  else {
    rv = lines[0] ?? "";
    const rest = lines.slice(1);
    if (rest.length > 0) rv += `\n${rest.map((line) => (line ? indention + line : line)).join("\n")}`;
  }
  return truthy(first) ? indention + rv : rv;
}

export function truncate(
  s: string,
  length: unknown,
  killwords: unknown,
  end: unknown,
  leeway: unknown,
): string {
  const len = isNumeric(length) ? numValue(length) : 255;
  const endText = pyStr(end);
  const lee = leeway === null || leeway === undefined ? 5 : numValue(leeway as number);
  const cps = codePoints(s);
  if (cps.length <= len + lee) return s;
  const head = cps.slice(0, Math.max(0, len - cpLength(endText))).join("");
  if (truthy(killwords)) return head + endText;
  const space = head.lastIndexOf(" ");
  return (space < 0 ? head : head.slice(0, space)) + endText;
}

export function title(s: string): string {
  return s
    .split(/([-\s({[<]+)/)
    .filter((item) => item !== "")
    .map((item) => {
      const [first = "", ...rest] = codePoints(item);
      return first.toUpperCase() + rest.join("").toLowerCase();
    })
    .join("");
}

/** `"%s: %s" | format(a, b)` or `"%(x)s" | format(x=1)`: printf-style formatting. */
export function format(value: unknown, args: unknown[]): string {
  const { positional, kwargs } = splitArgs(args);
  if (positional.length > 0 && kwargs.size > 0) {
    throw new PyError(
      "FilterArgumentError",
      "can't handle positional and keyword arguments at the same time",
    );
  }
  return percentFormat(pyStr(value), kwargs.size > 0 ? Object.fromEntries(kwargs) : makeTuple(positional));
}

/** `wordwrap`: each line of the text wrapped at `width`, joined with `wrapstring` (default `\n`). */
export function wordwrap(
  s: string,
  width: unknown,
  breakLongWords: unknown,
  wrapstring: unknown,
  breakOnHyphens: unknown,
): string {
  const sep = wrapstring === null || wrapstring === undefined ? "\n" : pyStr(wrapstring);
  const opts = {
    width: isNumeric(width) ? numValue(width) : 79,
    breakLongWords: truthy(breakLongWords),
    breakOnHyphens: truthy(breakOnHyphens),
  };
  return pySplitlines(s)
    .map((line) => wrap(line, opts).join(sep))
    .join(sep);
}

export function wordcount(s: string): number {
  return (s.match(/[\p{L}\p{N}_]+/gu) ?? []).length;
}

export function capitalize(s: string): string {
  const [first = "", ...rest] = codePoints(s);
  return first.toUpperCase() + rest.join("").toLowerCase();
}
