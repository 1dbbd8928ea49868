/**
 * A nunjucks Compiler subclass whose generated code evaluates expressions with Python semantics: every
 * operator, lookup, slice, truth test and `for` loop goes through the `py_*` functions of the private
 * runtime (see runtime.ts) instead of JS operators. Unknown filters and tests fail at compile time.
 */

import { FILTERS } from "./filters.js";
import { PySlice, PyTruthy } from "./jinja-parser.js";
import { type AstNode, type CompileFrame, type NodeClass, type NodeList, nj } from "./nunjucks-internals.js";
import { isIntNumber } from "./py-number.js";
import { TESTS } from "./tests.js";

const N = nj.nodes;
const CUSTOM_NODES = [PySlice, PyTruthy];
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

function children(node: unknown): AstNode[] {
  return (node as NodeList).children;
}

/** `instanceof` without type narrowing (every node class produces the same AstNode type). */
function is(node: unknown, kind: NodeClass): boolean {
  return node instanceof kind;
}

function field(node: AstNode, name: string): AstNode {
  return node[name] as AstNode;
}

const BaseCompiler = nj.compiler.Compiler;

export class JinjaCompiler extends BaseCompiler {
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

  override compileIf(node: AstNode, frame: CompileFrame, async?: boolean): void {
    node.cond = new PyTruthy(node.lineno, node.colno, node.cond);
    super.compileIf(node, frame, async);
  }

  override compileInlineIf(node: AstNode, frame: CompileFrame): void {
    node.cond = new PyTruthy(node.lineno, node.colno, node.cond);
    super.compileInlineIf(node, frame);
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
    if (!TESTS.has(name)) this.fail(`no test named '${name}'`, test.lineno, test.colno);
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
    if (!FILTERS.has(name)) this.fail(`no filter named '${name}'`, node.lineno, node.colno);
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

  compileLookupVal(node: AstNode, frame: CompileFrame): void {
    const val = field(node, "val");
    if (node.dot) {
      this._emit("runtime.py_getattr(");
      this._compileExpression(field(node, "target"), frame);
      this._emit(`, ${JSON.stringify(val.value)})`);
    } else {
      this.call("py_getitem", frame, field(node, "target"), val);
    }
  }

  compilePySlice(node: AstNode, frame: CompileFrame): void {
    const get = (name: string): AstNode | null => (node[name] as AstNode | null) ?? null;
    this.call("py_slice", frame, field(node, "target"), get("start"), get("stop"), get("step"));
  }

  override compileLiteral(node: AstNode, frame?: CompileFrame): void {
    if (node.isFloat === true && isIntNumber(node.value as number))
      this._emit(`runtime.py_float(${String(node.value)})`);
    else super.compileLiteral(node, frame);
  }

  override compileSet(node: AstNode, frame: CompileFrame): void {
    for (const target of node.targets as AstNode[]) {
      if (!is(target, N.Symbol))
        this.fail("can only assign to names in {% set %}", target.lineno, target.colno);
    }
    super.compileSet(node, frame);
  }

  /**
   * `{% for a[, b] in items [if cond] %}...{% else %}...{% endfor %}` with Python iteration (strings by
   * code point, dicts by key), tuple unpacking, Jinja2's `loop` object, and a scope of its own (a
   * `{% set %}` inside the loop does not change the variable outside it).
   */
  compileFor(node: AstNode, outer: CompileFrame): void {
    if (node.typename !== "For") this.fail("unknown tag", node.lineno, node.colno);
    let source = field(node, "arr");
    let cond: AstNode | null = null;
    if (is(source, N.InlineIf) && source.else_ === null) {
      cond = field(source, "cond");
      source = field(source, "body");
    }
    const target = field(node, "name");
    const names = is(target, N.Array)
      ? children(target).map((c) => c.value as string)
      : [target.value as string];
    const frame = outer.push();
    const ids = names.map((name) => {
      const id = this._tmpid();
      frame.set(name, id);
      return id;
    });
    const [arr, i, loop] = [this._tmpid(), this._tmpid(), this._tmpid()];
    const bind = (): void => {
      if (names.length === 1) {
        this._emitLine(`var ${ids[0]} = ${arr}[${i}]; frame.set(${JSON.stringify(names[0])}, ${ids[0]});`);
        return;
      }
      this._emitLine(`var ${loop}_u = runtime.py_unpack(${arr}[${i}], ${names.length});`);
      names.forEach((name, k) => {
        this._emitLine(`var ${ids[k]} = ${loop}_u[${k}]; frame.set(${JSON.stringify(name)}, ${ids[k]});`);
      });
    };
    this._emitLine("frame = frame.push(true);");
    this._emit(`var ${arr} = runtime.py_iterate(`);
    this._compileExpression(source, frame);
    this._emitLine(");");
    if (cond !== null) {
      this._emitLine(`var ${arr}_f = [];`);
      this._emitLine(`for (var ${i} = 0; ${i} < ${arr}.length; ${i}++) {`);
      bind();
      this._emit(`if (runtime.py_truthy(`);
      this._compileExpression(cond, frame);
      this._emitLine(`)) ${arr}_f.push(${arr}[${i}]);`);
      this._emitLine("}");
      this._emitLine(`${arr} = ${arr}_f;`);
    }
    this._emitLine(`var ${loop} = runtime.py_loop(${arr});`);
    this._emitLine(`for (var ${i} = 0; ${i} < ${arr}.length; ${i}++) {`);
    // Each iteration gets a fresh scope, as in Jinja2: a `{% set %}` does not carry over to the next one.
    this._emitLine("frame = frame.push(true);");
    bind();
    this._emitLine(`frame.set("loop", ${loop}.advance(${i}));`);
    this._withScopedSyntax(() => this.compile(field(node, "body"), frame));
    this._emitLine("frame = frame.pop();");
    this._emitLine("}");
    if (node.else_) {
      this._emitLine(`if (!${arr}.length) {`);
      this._withScopedSyntax(() => this.compile(field(node, "else_"), frame));
      this._emitLine("}");
    }
    this._emitLine("frame = frame.pop();");
  }
}
