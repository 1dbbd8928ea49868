/**
 * The expression half of swerun's nunjucks compiler: generated code evaluates expressions with Python
 * semantics, every operator, lookup, slice and truth test going through the `py_*` functions of the private
 * runtime (see runtime.ts) instead of JS operators. Unknown filters and tests fail at compile time, except
 * in a "soft" frame (inside an `if`, statement or expression), where Jinja2 raises only if they run. The
 * statements are compiled by its subclass, JinjaCompiler (jinja-compiler.ts).
 */

import { isIntNumber } from "../python/number.js";
import { PySlice, PyTruthy } from "./jinja-parser.js";
import { With } from "./jinja-statements.js";
import { type AstNode, type CompileFrame, type NodeClass, type NodeList, nj } from "./nunjucks-internals.js";
import { FILTERS, TESTS } from "./registry.js";

/** nunjucks' node classes. */
export const N = nj.nodes;
const CUSTOM_NODES = [PySlice, PyTruthy, With];
const BINARY_OPS: Record<string, string> = {
  Add: "py_add",
  Sub: "py_sub",
  Mul: "py_mul",
  Div: "py_div",
  FloorDiv: "py_floordiv",
  Mod: "py_mod",
  Pow: "py_pow",
  Concat: "py_concat",
};
const COMPARE_OPS = new Set(["==", "!=", "<", ">", "<=", ">="]);

/** A node list's children. */
export function children(node: unknown): AstNode[] {
  return (node as NodeList).children;
}

/** `instanceof` without type narrowing (every node class produces the same AstNode type). */
export function is(node: unknown, kind: NodeClass): boolean {
  return node instanceof kind;
}

/** A node's child node `name`. */
export function field(node: AstNode, name: string): AstNode {
  return node[name] as AstNode;
}

const BaseCompiler = nj.compiler.Compiler;

export class ExpressionCompiler extends BaseCompiler {
  /** Inside an `if` branch or an inline if (Jinja2's "soft" frame): unknown filters fail only at run time. */
  private soft = false;

  protected withSoft(soft: boolean, fn: () => void): void {
    const saved = this.soft;
    this.soft = soft;
    try {
      fn();
    } finally {
      this.soft = saved;
    }
  }

  override assertType(
    node: AstNode,
    ...types: Parameters<InstanceType<typeof BaseCompiler>["assertType"]>[1][]
  ): void {
    if (CUSTOM_NODES.some((C) => node instanceof C)) return;
    super.assertType(node, ...types);
  }

  private call(fn: string, frame: CompileFrame, ...args: Array<AstNode | null>): void {
    this._emit(`runtime.${fn}(`);
    args.forEach((arg, i) => {
      if (i > 0) this._emit(", ");
      if (arg === null) this._emit("null");
      else this._compileExpression(arg, frame);
    });
    this._emit(")");
  }

  private binary(node: AstNode, frame: CompileFrame): void {
    const fn = BINARY_OPS[node.typename] as string;
    this.call(fn, frame, field(node, "left"), field(node, "right"));
  }

  compileAdd = this.binary;
  compileSub = this.binary;
  compileMul = this.binary;
  compileDiv = this.binary;
  compileFloorDiv = this.binary;
  compileMod = this.binary;
  compilePow = this.binary;
  compileConcat = this.binary;

  compileNeg(node: AstNode, frame: CompileFrame): void {
    this.call("py_neg", frame, field(node, "target"));
  }

  compilePos(node: AstNode, frame: CompileFrame): void {
    this.call("py_pos", frame, field(node, "target"));
  }

  compileNot(node: AstNode, frame: CompileFrame): void {
    this._emit("!");
    this.call("py_truthy", frame, field(node, "target"));
  }

  compilePyTruthy(node: AstNode, frame: CompileFrame): void {
    this.call("py_truthy", frame, field(node, "target"));
  }

  /** `a or b` / `a and b` return an operand, evaluating `b` only when needed (as in Python). */
  private shortCircuit(fn: string, node: AstNode, frame: CompileFrame): void {
    this._emit(`runtime.${fn}(`);
    this._compileExpression(field(node, "left"), frame);
    this._emit(", function () { return ");
    this._compileExpression(field(node, "right"), frame);
    this._emit("; })");
  }

  compileOr(node: AstNode, frame: CompileFrame): void {
    this.shortCircuit("py_or", node, frame);
  }

  compileAnd(node: AstNode, frame: CompileFrame): void {
    this.shortCircuit("py_and", node, frame);
  }

  override compileInlineIf(node: AstNode, frame: CompileFrame): void {
    node.cond = new PyTruthy(node.lineno, node.colno, node.cond);
    this.withSoft(true, () => super.compileInlineIf(node, frame));
  }

  /** An unknown filter or test: a compile error, or in a soft frame a call that raises when it runs. */
  private unknown(kind: "filter" | "test", name: string, node: AstNode): boolean {
    if (!this.soft) this.fail(`no ${kind} named '${name}'`, node.lineno, node.colno);
    this._emit(`runtime.py_unknown(${JSON.stringify(kind)}, ${JSON.stringify(name)})`);
    return true;
  }

  compileCompare(node: AstNode, frame: CompileFrame): void {
    const ops = node.ops as AstNode[];
    for (const op of ops) {
      if (!COMPARE_OPS.has(op.type as string))
        this.fail(`unexpected operator '${op.type}'`, op.lineno, op.colno);
    }
    this._emit("runtime.py_cmp_chain([");
    this._compileExpression(field(node, "expr"), frame);
    for (const op of ops) {
      this._emit(", ");
      this._compileExpression(field(op, "expr"), frame);
    }
    this._emit(`], ${JSON.stringify(ops.map((op) => op.type))})`);
  }

  compileIn(node: AstNode, frame: CompileFrame): void {
    this.call("py_contains", frame, field(node, "right"), field(node, "left"));
  }

  compileIs(node: AstNode, frame: CompileFrame): void {
    const test = field(node, "right");
    const name = field(test, "name").value as string;
    if (!TESTS.has(name) && this.unknown("test", name, test)) return;
    this._emit(`(env.getTest(${JSON.stringify(name)}).call(context, `);
    this._compileExpression(field(node, "left"), frame);
    for (const arg of children(test.args)) {
      this._emit(", ");
      this._compileExpression(arg, frame);
    }
    this._emit(") === true)");
  }

  override compileFilter(node: AstNode, frame: CompileFrame): void {
    const name = field(node, "name").value as string;
    if (!FILTERS.has(name) && this.unknown("filter", name, node)) return;
    super.compileFilter(node, frame);
  }

  compileGroup(node: AstNode, frame: CompileFrame): void {
    if (node.isTuple) this._compileAggregate(node, frame, "runtime.py_tuple([", "])");
    else this._compileAggregate(node, frame, "(", ")");
  }

  /** `f(a, name=value)`: keyword names are names, not expressions. */
  compileKeywordArgs(node: AstNode, frame: CompileFrame): void {
    this._emit("runtime.makeKeywordArgs({");
    children(node).forEach((pair, i) => {
      if (i > 0) this._emit(", ");
      this._emit(`${JSON.stringify(field(pair, "key").value)}: `);
      this._compileExpression(field(pair, "value"), frame);
    });
    this._emit("})");
  }

  compileDict(node: AstNode, frame: CompileFrame): void {
    this._emit("{");
    children(node).forEach((pair, i) => {
      if (i > 0) this._emit(", ");
      const key = field(pair, "key");
      if (is(key, N.Literal) && typeof key.value === "string") this._emit(JSON.stringify(key.value));
      else {
        // Jinja2 evaluates a bare name used as a key (`{a: 1}` uses the value of `a`).
        this._emit("[");
        this.call("py_key", frame, key);
        this._emit("]");
      }
      this._emit(": ");
      this._compileExpression(field(pair, "value"), frame);
    });
    this._emit("}");
  }

  /** A name records its line before it is looked up (as a printed expression does: see compileOutput). */
  override compileSymbol(node: AstNode, frame: CompileFrame): void {
    this._emit(`(lineno = ${node.lineno}, `);
    super.compileSymbol(node, frame);
    this._emit(")");
  }

  compileLookupVal(node: AstNode, frame: CompileFrame): void {
    this._emit(`(lineno = ${node.lineno}, `);
    this.compileLookupValue(node, frame);
    this._emit(")");
  }

  private compileLookupValue(node: AstNode, frame: CompileFrame): void {
    const val = field(node, "val");
    if (node.dot) {
      this._emit("runtime.py_getattr(");
      this._compileExpression(field(node, "target"), frame);
      this._emit(`, ${JSON.stringify(val.value)})`);
    } else {
      this.call("py_getitem", frame, field(node, "target"), val);
    }
  }

  /** A call; unlike nunjucks, the callee's name (only used in messages) is not emitted into the code. */
  compileFunCall(node: AstNode, frame: CompileFrame): void {
    this._emit(`(lineno = ${node.lineno}, colno = ${node.colno}, runtime.callWrap(`);
    this._compileExpression(field(node, "name"), frame);
    this._emit(', "", context, ');
    this._compileAggregate(field(node, "args"), frame, "[", "])");
    this._emit(")");
  }

  compilePySlice(node: AstNode, frame: CompileFrame): void {
    const get = (name: string): AstNode | null => (node[name] as AstNode | null) ?? null;
    this.call("py_slice", frame, field(node, "target"), get("start"), get("stop"), get("step"));
  }

  override compileLiteral(node: AstNode, frame?: CompileFrame): void {
    if (node.isFloat === true && isIntNumber(node.value as number))
      this._emit(`runtime.py_float(${String(node.value)})`);
    else if (typeof node.value === "bigint") this._emit(`${node.value}n`);
    else super.compileLiteral(node, frame);
  }
}
