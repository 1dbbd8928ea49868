/**
 * The runtime object handed to compiled templates. It starts from nunjucks' runtime (frames, macros,
 * keyword arguments) and replaces the value-level functions with Python/Jinja2 semantics; it is a
 * private copy, so nunjucks' own module stays untouched. Also the render Context (variables + globals).
 */

import { pyGetattr, pyGetitem } from "../python/access.js";
import { PyError, typeError, valueError } from "../python/errors.js";
import { percentFormat } from "../python/format.js";
import { Markup, markupFormatArgs } from "../python/markup.js";
import { setNamespaceAttr } from "../python/namespace.js";
import { PyFloat } from "../python/number.js";
import {
  iterate,
  pyAdd,
  pyCompare,
  pyConcat,
  pyContains,
  pyDiv,
  pyFloorDiv,
  pyMul,
  pyNeg,
  pyNumMod,
  pyPos,
  pyPow,
  pySlice,
  pySub,
  truthy,
} from "../python/ops.js";
import { strRepr } from "../python/string.js";
import { checkDefined, JinjaUndefined } from "../python/undefined.js";
import { isStr, makeTuple, pyStr, typeName } from "../python/values.js";
import { LoopContext } from "./loop.js";
import { nj, type RuntimeFrame } from "./nunjucks-internals.js";
import { renderTick } from "./render-limits.js";

type Block = (...args: unknown[]) => void;

/** What compiled code calls `context`: the template variables, Jinja2's globals, and blocks. */
export class RenderContext {
  private readonly vars: Record<string, unknown>;
  private readonly blocks = new Map<string, Block[]>();
  private readonly exported: string[] = [];

  constructor(
    vars: Record<string, unknown>,
    blocks: Record<string, Block>,
    private readonly globals: ReadonlyMap<string, unknown>,
  ) {
    this.vars = Object.assign(Object.create(null) as Record<string, unknown>, vars);
    for (const [name, block] of Object.entries(blocks)) this.addBlock(name, block);
  }

  lookup(name: string): unknown {
    const v = this.vars[name];
    return v !== undefined ? v : this.globals.get(name);
  }
  setVariable(name: string, value: unknown): void {
    this.vars[name] = value;
  }
  getVariables(): Record<string, unknown> {
    return this.vars;
  }
  addExport(name: string): void {
    this.exported.push(name);
  }
  getExported(): Record<string, unknown> {
    return Object.fromEntries(this.exported.map((n) => [n, this.vars[n]]));
  }
  addBlock(name: string, block: Block): this {
    this.blocks.set(name, [...(this.blocks.get(name) ?? []), block]);
    return this;
  }
  getBlock(name: string): Block {
    const block = this.blocks.get(name)?.[0];
    if (!block) throw new Error(`unknown block "${name}"`);
    return block;
  }
  getSuper(): never {
    throw new Error("super() is not supported in a standalone template");
  }
}

function undefinedName(name: string): JinjaUndefined {
  return new JinjaUndefined(() => `${strRepr(name)} is undefined`);
}

function cmpChain(operands: unknown[], ops: string[]): boolean {
  for (let i = 0; i < ops.length; i++) {
    if (!pyCompare(ops[i] as string, operands[i], operands[i + 1])) return false;
  }
  return true;
}

const base = nj.runtime;

const LINES = new WeakMap<object, number>();

/** The 1-based template line where a rendering error happened, when known. */
export function errorLine(error: unknown): number | undefined {
  return typeof error === "object" && error !== null ? LINES.get(error) : undefined;
}

/** The runtime object passed to compiled templates. */
export const RUNTIME: Readonly<Record<string, unknown>> = Object.freeze({
  ...base,
  /** `{{ value }}`: Python's `str()`; undefined values raise. */
  suppressValue(value: unknown): string {
    return typeof value === "string" ? value : pyStr(checkDefined(value));
  },
  contextOrFrameLookup(context: RenderContext, frame: RuntimeFrame, name: string): unknown {
    const v = frame.lookup(name);
    if (v !== undefined) return v;
    const c = context.lookup(name);
    return c !== undefined ? c : undefinedName(name);
  },
  memberLookup: pyGetitem,
  callWrap(fn: unknown, _name: string, context: unknown, args: unknown[]): unknown {
    checkDefined(fn);
    if (fn instanceof LoopContext) return fn.__call__(args);
    if (typeof fn !== "function") throw typeError(`'${typeName(fn)}' object is not callable`);
    const result: unknown = fn.apply(context, args);
    return result instanceof String ? result.toString() : result;
  },
  /** Errors keep their own type so that render.ts can report them; the line where it failed is noted. */
  handleError(error: unknown, lineno: unknown): unknown {
    if (typeof error === "object" && error !== null && typeof lineno === "number" && !LINES.has(error))
      LINES.set(error, lineno + 1);
    return error;
  },
  py_truthy: truthy,
  py_or: (a: unknown, b: () => unknown): unknown => (truthy(a) ? a : b()),
  py_and: (a: unknown, b: () => unknown): unknown => (truthy(a) ? b() : a),
  py_cmp_chain: cmpChain,
  py_contains: pyContains,
  py_add: pyAdd,
  py_sub: pySub,
  py_mul: pyMul,
  py_div: pyDiv,
  py_floordiv: pyFloorDiv,
  py_mod(a: unknown, b: unknown): unknown {
    if (a instanceof Markup) return new Markup(percentFormat(a.toString(), markupFormatArgs(b)));
    return isStr(a) ? percentFormat(a.toString(), b) : pyNumMod(a, b);
  },
  py_pow: pyPow,
  py_neg: pyNeg,
  py_pos: pyPos,
  py_concat: pyConcat,
  py_getattr: pyGetattr,
  py_setattr: setNamespaceAttr,
  py_getitem: pyGetitem,
  py_slice: pySlice,
  py_float: (v: number): PyFloat => new PyFloat(v),
  py_tuple: makeTuple,
  py_key: (k: unknown): string => pyStr(checkDefined(k)),
  py_iterate: iterate,
  /** Every loop iteration: the render's time and size limits (render-limits.ts). */
  py_tick: renderTick,
  py_unpack(value: unknown, n: number): unknown[] {
    const items = iterate(value);
    if (items.length > n) throw valueError(`too many values to unpack (expected ${n})`);
    if (items.length < n)
      throw valueError(`not enough values to unpack (expected ${n}, got ${items.length})`);
    return items;
  },
  py_loop: (
    items: unknown[],
    depth?: number,
    recurse?: (items: unknown, depth: number) => string,
  ): LoopContext => new LoopContext(items, depth, recurse),
  /** A filter or test name that does not exist, in an `if` branch that ran (Jinja2 raises only then). */
  py_unknown(kind: string, name: string): never {
    throw new PyError("TemplateRuntimeError", `No ${kind} named ${strRepr(name)} found.`);
  },
});
