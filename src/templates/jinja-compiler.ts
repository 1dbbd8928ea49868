/**
 * The nunjucks Compiler subclass swerun compiles templates with: ExpressionCompiler (expression-compiler.ts)
 * evaluates expressions with Python semantics; this class compiles the statements as Jinja2 runs them,
 * including those nunjucks lacks (`with`, recursive loops, `set` with unpacking or `ns.attr`), and records
 * the line of each printed expression for error messages.
 */

import { children, ExpressionCompiler, field, is, N } from "./expression-compiler.js";
import { PyTruthy } from "./jinja-parser.js";
import type { AstNode, CompileFrame } from "./nunjucks-internals.js";

export class JinjaCompiler extends ExpressionCompiler {
  override compileIf(node: AstNode, frame: CompileFrame, async?: boolean): void {
    node.cond = new PyTruthy(node.lineno, node.colno, node.cond);
    this.withSoft(true, () => super.compileIf(node, frame, async));
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
