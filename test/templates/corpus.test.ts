/**
 * Renders every case of the Jinja2 corpus (test/fixtures/jinja) and compares the output byte for byte
 * with what Python's Jinja2 produced (scripts/gen-jinja-corpus.py writes the expected files).
 */

import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { renderTemplate, TemplateError } from "../../src/templates/render.js";

const CORPUS = fileURLToPath(new URL("../fixtures/jinja/", import.meta.url));

interface Case {
  name: string;
  template: string;
  vars?: Record<string, unknown>;
}

/** The `$repeat` / `$concat` macros of cases.json (see scripts/gen-jinja-corpus.py). */
function expand(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(expand);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value);
  const [key, arg] = entries[0] ?? [];
  if (entries.length === 1 && key === "$repeat") {
    const [text, count] = arg as [unknown, number];
    return (expand(text) as string).repeat(count);
  }
  if (entries.length === 1 && key === "$concat") return (arg as unknown[]).map(expand).join("");
  return Object.fromEntries(entries.map(([k, v]) => [k, expand(v)]));
}

/** Jinja2's compile-time errors; swerun reports them as syntax errors with a line. */
const COMPILE_ERRORS = new Set(["TemplateSyntaxError", "TemplateAssertionError"]);
/** Cases where swerun fails as Jinja2 does, with its own wording (swerun names the undefined variable). */
const SAME_FAILURE_OTHER_MESSAGE = new Set(["undef_tojson"]);

const cases = JSON.parse(readFileSync(`${CORPUS}cases.json`, "utf8")) as Case[];

function render(c: Case): string {
  const source = readFileSync(`${CORPUS}templates/${c.template}`, "utf8");
  return renderTemplate(source, expand(c.vars ?? {}) as Record<string, unknown>, c.name);
}

describe("Jinja2 corpus", () => {
  it("has cases", () => {
    expect(cases.length).toBeGreaterThan(90);
  });

  for (const c of cases) {
    const expectedPath = `${CORPUS}expected/${c.name}.expected`;
    if (existsSync(expectedPath)) {
      it(`${c.name} renders like Jinja2`, () => {
        expect(render(c)).toBe(readFileSync(expectedPath, "utf8"));
      });
      continue;
    }
    const [jinjaError = "", lineText] = readFileSync(`${CORPUS}expected/${c.name}.error`, "utf8")
      .trim()
      .split("\n");
    // The template line Jinja2's traceback names, when it failed while rendering.
    const where = lineText ? ` at line ${lineText.replace("line ", "")}` : "";
    it(`${c.name} fails like Jinja2 (${jinjaError})`, () => {
      let error: unknown;
      try {
        render(c);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(TemplateError);
      const message = (error as TemplateError).message;
      expect(message).not.toContain("\n");
      expect(message.startsWith(`template "${c.name}"${where}: `)).toBe(true);
      const [type = ""] = jinjaError.split(":", 1);
      if (type === "UndefinedError") {
        expect(message).toBe(`template "${c.name}"${where}: ${jinjaError.slice("UndefinedError: ".length)}`);
      } else if (COMPILE_ERRORS.has(type)) {
        expect(message).toContain(`template "${c.name}": syntax error`);
      } else if (!SAME_FAILURE_OTHER_MESSAGE.has(c.name)) {
        // Python exceptions (TypeError, ValueError, KeyError, TemplateRuntimeError, ...): type and message.
        expect(message).toBe(`template "${c.name}"${where}: ${jinjaError}`);
      }
    });
  }
});
