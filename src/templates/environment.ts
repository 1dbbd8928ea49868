/**
 * Compiles Jinja2 template source with nunjucks' lexer and code generator, through the Jinja2-flavoured
 * parser and compiler subclasses, and renders the result with the private Python-semantics runtime.
 */

import type { Environment } from "nunjucks";
import { makeGlobals } from "./globals.js";
import { JinjaCompiler } from "./jinja-compiler.js";
import { JinjaParser } from "./jinja-parser.js";
import { nj, type Tokenizer } from "./nunjucks-internals.js";
import { FILTERS, TESTS } from "./registry.js";
import { checkRenderedSize, startRender } from "./render-limits.js";
import { RenderContext, RUNTIME } from "./runtime.js";

type Callback = (err: unknown, result?: string) => void;
type RenderFn = (
  env: Environment,
  context: RenderContext,
  frame: unknown,
  runtime: unknown,
  cb: Callback,
) => void;
type Block = (...args: unknown[]) => void;

/** A syntax error found while compiling, with its 1-based line. */
export class TemplateSyntaxError extends Error {
  constructor(
    message: string,
    readonly lineno: number | undefined,
  ) {
    super(message);
    this.name = "TemplateSyntaxError";
  }
}

/**
 * The nunjucks environment compiled templates talk to (`env.getFilter`, `env.getTest`): no autoescape,
 * no loaders (like `jinja2.Template(source)`), and only Jinja2's filters and tests.
 */
function createEnvironment(): Environment {
  const env = new nj.Environment([], { autoescape: false, throwOnUndefined: false });
  const writable = env as unknown as {
    filters: object;
    tests: object;
    addTest(name: string, fn: unknown): void;
  };
  writable.filters = {};
  writable.tests = {};
  for (const [name, fn] of FILTERS) env.addFilter(name, fn);
  for (const [name, fn] of TESTS) writable.addTest(name, fn);
  return env;
}

let shared: { env: Environment; globals: ReadonlyMap<string, unknown> } | undefined;

function environment(): { env: Environment; globals: ReadonlyMap<string, unknown> } {
  shared ??= { env: createEnvironment(), globals: makeGlobals() };
  return shared;
}

/** Jinja2's lexer normalises newlines and drops one trailing newline (`keep_trailing_newline=False`). */
export function normalizeSource(source: string): string {
  const lines = source.split(/\r\n|\r|\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.join("\n");
}

export class CompiledTemplate {
  private constructor(
    private readonly root: RenderFn,
    private readonly blocks: Record<string, Block>,
  ) {}

  /** @throws TemplateSyntaxError */
  static compile(source: string, name: string): CompiledTemplate {
    let tokens: Tokenizer | undefined;
    let code: string;
    try {
      tokens = nj.lexer.lex(normalizeSource(source), {});
      const ast = new JinjaParser(tokens).parseAsRoot();
      const compiler = new JinjaCompiler(name, false);
      compiler.compile(ast);
      code = compiler.getCode();
    } catch (e) {
      const err = e as { message?: unknown; lineno?: unknown };
      const lineno = typeof err.lineno === "number" ? err.lineno : tokens ? tokens.lineno + 1 : undefined;
      throw new TemplateSyntaxError(String(err.message ?? e), lineno);
    }
    let props: Record<string, RenderFn>;
    try {
      props = new Function(code)() as Record<string, RenderFn>;
    } catch (e) {
      // Generated code that does not parse is a swerun bug, not a template error; still report it per template.
      throw new TemplateSyntaxError(`internal error compiling the template: ${String(e)}`, undefined);
    }
    const blocks: Record<string, Block> = {};
    for (const [key, fn] of Object.entries(props))
      if (key.startsWith("b_")) blocks[key.slice(2)] = fn as Block;
    if (!props.root) throw new TemplateSyntaxError("compilation produced no root function", undefined);
    return new CompiledTemplate(props.root, blocks);
  }

  /** Renders with the given variables; errors from the template expressions propagate unchanged. */
  render(vars: Record<string, unknown>): string {
    const { env, globals } = environment();
    const context = new RenderContext(vars, this.blocks, globals);
    const frame = new nj.runtime.Frame();
    frame.topLevel = true;
    let failure: unknown;
    let output = "";
    const stop = startRender();
    try {
      this.root(env, context, frame, RUNTIME, (err, result) => {
        if (err) failure = err;
        else output = result ?? "";
      });
    } finally {
      stop();
    }
    if (failure !== undefined) throw failure;
    checkRenderedSize(output);
    return output;
  }
}
