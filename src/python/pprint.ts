/**
 * Python's `pprint.pformat(value)` (width 80, indent 1, dict keys sorted), which Jinja2's `pprint`
 * filter returns: a value whose repr fits on the line prints as its repr; a longer list, tuple or dict
 * gets one item per line, and a long string is split into several literals.
 */

import { pyOrder } from "./ops.js";
import { cpLength, pySplitlines, strRepr } from "./string.js";
import { isDict, isStr, isTuple, pyRepr, typeName, viewKind } from "./values.js";

const WIDTH = 80;

function sortedEntries(d: Record<string, unknown>): Array<[string, unknown]> {
  return Object.entries(d).sort(([a], [b]) => safeOrder(a, b));
}

function safeOrder(a: unknown, b: unknown): number {
  try {
    return pyOrder(a, b);
  } catch {
    return typeName(a) < typeName(b) ? -1 : typeName(a) > typeName(b) ? 1 : 0;
  }
}

/** `repr()` with dict keys sorted at every level (pprint's `_safe_repr`). */
function sortedRepr(x: unknown): string {
  if (isDict(x))
    return `{${sortedEntries(x)
      .map(([k, v]) => `${strRepr(k)}: ${sortedRepr(v)}`)
      .join(", ")}}`;
  if (Array.isArray(x) && !viewKind(x)) {
    const items = x.map(sortedRepr);
    if (!isTuple(x)) return `[${items.join(", ")}]`;
    return items.length === 1 ? `(${items[0]},)` : `(${items.join(", ")})`;
  }
  return pyRepr(x);
}

class Printer {
  out = "";

  format(x: unknown, indent: number, allowance: number, level: number): void {
    const rep = sortedRepr(x);
    if (cpLength(rep) > WIDTH - indent - allowance) {
      if (isDict(x)) {
        this.dict(x, indent, allowance, level + 1);
        return;
      }
      if (Array.isArray(x) && !viewKind(x)) {
        const close = !isTuple(x) ? "]" : x.length === 1 ? ",)" : ")";
        this.sequence(x, isTuple(x) ? "(" : "[", close, indent, allowance, level + 1);
        return;
      }
      if (isStr(x) && x.length > 0) {
        this.str(x.toString(), indent, allowance, level + 1);
        return;
      }
    }
    this.out += rep;
  }

  dict(d: Record<string, unknown>, indent: number, allowance: number, level: number): void {
    this.out += "{";
    const items = sortedEntries(d);
    const inner = indent + 1;
    items.forEach(([key, value], i) => {
      const last = i === items.length - 1;
      const rep = strRepr(key);
      this.out += `${rep}: `;
      this.format(value, inner + cpLength(rep) + 2, last ? allowance + 1 : 1, level);
      if (!last) this.out += `,\n${" ".repeat(inner)}`;
    });
    this.out += "}";
  }

  sequence(
    items: unknown[],
    open: string,
    close: string,
    indent: number,
    allowance: number,
    level: number,
  ): void {
    this.out += open;
    const inner = indent + 1;
    items.forEach((item, i) => {
      const last = i === items.length - 1;
      if (i > 0) this.out += `,\n${" ".repeat(inner)}`;
      this.format(item, inner, last ? allowance + close.length : 1, level);
    });
    this.out += close;
  }

  str(s: string, indent0: number, allowance0: number, level: number): void {
    const indent = level === 1 ? indent0 + 1 : indent0;
    const allowance = level === 1 ? allowance0 + 1 : allowance0;
    const lines = pySplitlines(s, true);
    const maxWidth = WIDTH - indent;
    const chunks: string[] = [];
    lines.forEach((line, i) => {
      const lastLine = i === lines.length - 1;
      const rep = strRepr(line);
      if (cpLength(rep) <= (lastLine ? maxWidth - allowance : maxWidth)) {
        chunks.push(rep);
        return;
      }
      const parts = line.match(/\S*\s*/gu)?.filter((p) => p !== "") ?? [];
      let current = "";
      parts.forEach((part, j) => {
        const candidate = current + part;
        const limit = j === parts.length - 1 && lastLine ? maxWidth - allowance : maxWidth;
        if (cpLength(strRepr(candidate)) > limit) {
          if (current) chunks.push(strRepr(current));
          current = part;
        } else current = candidate;
      });
      if (current) chunks.push(strRepr(current));
    });
    if (chunks.length === 1) {
      this.out += chunks[0];
      return;
    }
    const body = chunks.join(`\n${" ".repeat(indent)}`);
    this.out += level === 1 ? `(${body})` : body;
  }
}

/** `pprint.pformat(value)`. */
export function pformat(value: unknown): string {
  const printer = new Printer();
  printer.format(value, 0, 0, 0);
  return printer.out;
}
