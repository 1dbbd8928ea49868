/**
 * markupsafe's `Markup`: a string marked safe for HTML. `escape`/`e` and `forceescape` return one, `safe`
 * marks a string, and escaping a Markup again leaves it unchanged. Without autoescaping (as swerun
 * renders) it prints like any string; it only matters where Jinja2 escapes the other operand:
 * `markup + str`, `markup % args`.
 */

import { isNumeric } from "./number.js";
import { isStr, isTuple, makeTuple, pyStr } from "./values.js";

export class Markup extends String {}

function htmlEscape(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" })[c] ?? c,
  );
}

/** markupsafe's `escape(value)`: a Markup stays as it is; anything else is `str()`-ed and escaped. */
export function escapeHtml(value: unknown): Markup {
  return value instanceof Markup ? value : new Markup(htmlEscape(pyStr(value)));
}

/** `a + b` where either side is a Markup: the other side is escaped. */
export function markupConcat(a: unknown, b: unknown): Markup {
  return new Markup(escapeHtml(a).toString() + escapeHtml(b).toString());
}

/** The arguments of `markup % args`, with strings and other non-numbers escaped. */
export function markupFormatArgs(args: unknown): unknown {
  const esc = (v: unknown): unknown => (isNumeric(v) || v === null ? v : escapeHtml(v).toString());
  if (isTuple(args)) return makeTuple((args as unknown[]).map(esc));
  if (isStr(args) || !(typeof args === "object" && args !== null && !Array.isArray(args))) return esc(args);
  if (Array.isArray(args)) return esc(args);
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, esc(v)]));
}
