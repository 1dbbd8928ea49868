/**
 * A nunjucks Compiler subclass whose generated code evaluates expressions with Python semantics: every
 * operator, lookup, slice, truth test and `for` loop goes through the `py_*` functions of the private
 * runtime (see runtime.ts) instead of JS operators. It also compiles the Jinja2 statements nunjucks lacks
 * (`with`, recursive loops, `set` with unpacking or `ns.attr`). Unknown filters and tests fail at compile
 * time, except inside an `if` (statement or expression), where Jinja2 raises only if they run.
 */

import { isIntNumber } from "../python/number.js";
import { PySlice, PyTruthy } from "./jinja-parser.js";
import { With } from "./jinja-statements.js";
import { type AstNode, type CompileFrame, type NodeClass, type NodeList, nj } from "./nunjucks-internals.js";
import { FILTERS, TESTS } from "./registry.js";

const N = nj.nodes;
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
  /** Inside an `if` branch or an inline if (Jinja2's "soft" frame): unknown filters fail only at run time. */
  private soft = false;

  private withSoft(soft: boolean, fn: () => void): void {
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

  override compileIf(node: AstNode, frame: CompileFrame, async?: boolean): void {
    node.cond = new PyTruthy(node.lineno, node.colno, node.cond);
    this.withSoft(true, () => super.compileIf(node, frame, async));
  }

  override compileInlineIf(node: AstNode, frame: CompileFrame): void {
    node.cond = new PyTruthy(node.lineno, node.colno, node.cond);
    this.withSoft(true, () => super.compileInlineIf(node, frame));
  }

  override compileMacro(node: AstNode, frame: CompileFrame): void {
    this.withSoft(false, () => super.compileMacro(node, frame));
  }

  override compileCaller(node: AstNode, frame: CompileFrame): void {
    this.withSoft(false, () => super.compileCaller(node, frame));
  }

  override compileCapture(node: AstNode, frame: CompileFrame): void {
    this.withSoft(false, () => super.compileCapture(node, frame));
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

  /**
   * Each printed expression, name and attribute lookup records its line (`lineno`, 0-based as nunjucks
   * counts) before it runs, so that an error can say where it happened (see `RUNTIME.handleError`).
   */
  override compileOutput(node: AstNode, frame: CompileFrame): void {
    for (const child of children(node)) {
      if (!is(child, N.TemplateData)) this._emitLine(`lineno = ${child.lineno};`);
      super.compileOutput(new N.Output(node.lineno, node.colno, [child]), frame);
    }
  }

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

  /**
   * `{% set %}`: one name, several names unpacking the value (`{% set k, v = pair %}`), or a namespace
   * attribute (`{% set ns.count = ns.count + 1 %}`). Names are stored as nunjucks stores them (frame, and
   * the context at top level).
   */
  override compileSet(node: AstNode, frame: CompileFrame): void {
    const targets = node.targets as AstNode[];
    const value = this._tmpid();
    this._emit(`var ${value} = `);
    if (node.value) this._compileExpression(field(node, "value"), frame);
    else this.compile(field(node, "body"), frame);
    this._emitLine(";");
    const values = targets.length === 1 ? [value] : targets.map((_, i) => `${value}_u[${i}]`);
    if (targets.length > 1)
      this._emitLine(`var ${value}_u = runtime.py_unpack(${value}, ${targets.length});`);
    targets.forEach((target, i) => {
      const v = values[i] as string;
      if (is(target, N.LookupVal) && target.dot) {
        this._emit("runtime.py_setattr(");
        this._compileExpression(field(target, "target"), frame);
        this._emitLine(`, ${JSON.stringify(field(target, "val").value)}, ${v});`);
        return;
      }
      if (!is(target, N.Symbol))
        this.fail("can only assign to names in {% set %}", target.lineno, target.colno);
      const name = target.value as string;
      const quoted = JSON.stringify(name);
      const id = frame.lookup(name);
      if (id) this._emitLine(`${id} = ${v};`);
      this._emitLine(`frame.set(${quoted}, ${v}, true);`);
      this._emitLine(`if (frame.topLevel) { context.setVariable(${quoted}, ${v});`);
      if (!name.startsWith("_")) this._emitLine(`context.addExport(${quoted}, ${v});`);
      this._emitLine("}");
    });
  }

  /** `{% with a = x %}`: the values are computed first, then bound in a scope of their own. */
  compileWith(node: AstNode, outer: CompileFrame): void {
    const targets = node.targets as AstNode[];
    const ids = (node.values as AstNode[]).map((value) => {
      const id = this._tmpid();
      this._emit(`var ${id} = `);
      this._compileExpression(value, outer);
      this._emitLine(";");
      return id;
    });
    this._emitLine("frame = frame.push(true);");
    targets.forEach((t, i) => {
      this._emitLine(`frame.set(${JSON.stringify(t.value)}, ${ids[i]});`);
    });
    const frame = outer.push();
    this.withSoft(false, () => this._withScopedSyntax(() => this.compile(field(node, "body"), frame)));
    this._emitLine("frame = frame.pop();");
  }

  /**
   * `{% for a[, b] in items [if cond] [recursive] %}...{% else %}...{% endfor %}` with Python iteration
   * (strings by code point, dicts by key), tuple unpacking, Jinja2's `loop` object, and a scope of its
   * own (a `{% set %}` inside the loop does not change the variable outside it). A recursive loop is
   * compiled as a function that `loop(children)` calls again, one level deeper.
   */
  compileFor(node: AstNode, outer: CompileFrame): void {
    if (node.typename !== "For") this.fail("unknown tag", node.lineno, node.colno);
    const source = field(node, "arr");
    if (!node.recursive) {
      this.withSoft(false, () => this.compileLoop(node, outer, (emit) => emit(source)));
      return;
    }
    const fn = this._tmpid();
    const buffer = this.buffer;
    this._emitLine(`var ${fn} = function (${fn}_items, ${fn}_depth) {`);
    this.buffer = `${fn}_out`;
    this._emitLine(`var ${this.buffer} = "";`);
    this.withSoft(false, () =>
      this.compileLoop(node, outer, () => this._emit(`${fn}_items`), `${fn}_depth, ${fn}`),
    );
    this._emitLine(`return ${this.buffer};`);
    this._emitLine("};");
    this.buffer = buffer;
    this._emit(`${buffer} += ${fn}(`);
    this._compileExpression(source, outer);
    this._emitLine(", 1);");
  }

  /** The loop itself; `iterable` emits the expression to iterate, `loopArgs` extra LoopContext arguments. */
  private compileLoop(
    node: AstNode,
    outer: CompileFrame,
    iterable: (emit: (n: AstNode) => void) => void,
    loopArgs?: string,
  ): void {
    const cond = (node.cond as AstNode | null | undefined) ?? null;
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
    this._emit(`var ${arr} = runtime.py_iterate(`);
    iterable((n) => this._compileExpression(n, outer));
    this._emitLine(");");
    this._emitLine("frame = frame.push(true);");
    if (cond !== null) {
      this._emitLine(`var ${arr}_f = [];`);
      this._emitLine(`for (var ${i} = 0; ${i} < ${arr}.length; ${i}++) {`);
      this._emitLine(`runtime.py_tick(${this.buffer});`);
      bind();
      this._emit(`if (runtime.py_truthy(`);
      this._compileExpression(cond, frame);
      this._emitLine(`)) ${arr}_f.push(${arr}[${i}]);`);
      this._emitLine("}");
      this._emitLine(`${arr} = ${arr}_f;`);
    }
    this._emitLine(`var ${loop} = runtime.py_loop(${arr}${loopArgs ? `, ${loopArgs}` : ""});`);
    this._emitLine(`for (var ${i} = 0; ${i} < ${arr}.length; ${i}++) {`);
    this._emitLine(`runtime.py_tick(${this.buffer});`);
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
