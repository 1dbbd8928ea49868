/**
 * Renders mini-swe-agent's Jinja2 templates byte-for-byte like Python's
 * `jinja2.Template(source, undefined=StrictUndefined).render(**vars)`, on top of nunjucks.
 *
 * Compiled templates are cached by source text, so rendering the same template on every step only
 * runs the compiled function.
 *
 * Where things are in src/templates:
 * - filters.ts: the table of every filter (implementations in filters-text/-num/-seq/-html.ts, pprint.ts,
 *   textwrap.ts); tests.ts: every `is` test; globals.ts: `range`, `dict`, `namespace`, ...;
 *   registry.ts: turns them into the maps templates use.
 * - py-methods.ts (dict, list) and py-str-methods.ts (str): methods callable on values; py-format.ts
 *   (`%`) and py-format-spec.ts (`str.format`).
 * - src/python/: Python values and operators in JS.
 * - jinja-lexer.ts, jinja-statements.ts, jinja-parser.ts, jinja-compiler.ts: Jinja2 syntax on nunjucks'
 *   parser and code generator; runtime.ts: what the compiled code calls; environment.ts: compile + render.
 */

import { PyError } from "../python/errors.js";
import { UndefinedError } from "../python/undefined.js";
import { CompiledTemplate, TemplateSyntaxError } from "./environment.js";
import { errorLine } from "./runtime.js";

/** A template that does not compile or fails while rendering; the message is one line. */
export class TemplateError extends Error {
  constructor(
    message: string,
    readonly templateName: string,
    readonly lineno?: number,
  ) {
    super(message);
    this.name = "TemplateError";
  }
}

const MAX_CACHED = 256;
const cache = new Map<string, CompiledTemplate>();

function compiled(source: string, templateName: string): CompiledTemplate {
  let template = cache.get(source);
  if (template === undefined) {
    try {
      template = CompiledTemplate.compile(source, templateName);
    } catch (e) {
      if (!(e instanceof TemplateSyntaxError)) throw e;
      const where = e.lineno === undefined ? "" : ` at line ${e.lineno}`;
      throw new TemplateError(
        `template "${templateName}": syntax error${where}: ${firstLine(e.message)}`,
        templateName,
        e.lineno,
      );
    }
    if (cache.size >= MAX_CACHED) {
      const oldest = cache.keys().next();
      if (!oldest.done) cache.delete(oldest.value);
    }
    cache.set(source, template);
  }
  return template;
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? "";
}

function describe(error: unknown): string {
  if (error instanceof UndefinedError) return firstLine(error.message);
  if (error instanceof PyError) return `${error.pyType}: ${firstLine(error.message)}`;
  if (error instanceof Error) return firstLine(error.message);
  return firstLine(String(error));
}

/**
 * Renders `source` with `vars` as Jinja2 would with StrictUndefined.
 *
 * @param templateName names the template in error messages, e.g. `"observation_template"`.
 * @throws TemplateError on a syntax error, an undefined variable or attribute, or an invalid operation.
 */
export function renderTemplate(source: string, vars: Record<string, unknown>, templateName: string): string {
  const template = compiled(source, templateName);
  try {
    return template.render(vars);
  } catch (e) {
    const line = errorLine(e);
    const where = line === undefined ? "" : ` at line ${line}`;
    throw new TemplateError(`template "${templateName}"${where}: ${describe(e)}`, templateName, line);
  }
}
