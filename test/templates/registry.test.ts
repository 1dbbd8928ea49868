/**
 * swerun offers exactly Jinja2 3.1's builtin filters, tests and globals (the lists below are Jinja2's
 * `FILTERS`, `TESTS` and `DEFAULT_NAMESPACE`), and Python values passed in as JS bigints stay exact.
 */

import { describe, expect, it } from "vitest";
import { FILTERS, TESTS } from "../../src/templates/registry.js";
import { renderTemplate } from "../../src/templates/render.js";

const JINJA2_FILTERS = [
  "abs",
  "attr",
  "batch",
  "capitalize",
  "center",
  "count",
  "d",
  "default",
  "dictsort",
  "e",
  "escape",
  "filesizeformat",
  "first",
  "float",
  "forceescape",
  "format",
  "groupby",
  "indent",
  "int",
  "items",
  "join",
  "last",
  "length",
  "list",
  "lower",
  "map",
  "max",
  "min",
  "pprint",
  "random",
  "reject",
  "rejectattr",
  "replace",
  "reverse",
  "round",
  "safe",
  "select",
  "selectattr",
  "slice",
  "sort",
  "string",
  "striptags",
  "sum",
  "title",
  "tojson",
  "trim",
  "truncate",
  "unique",
  "upper",
  "urlencode",
  "urlize",
  "wordcount",
  "wordwrap",
  "xmlattr",
];
const JINJA2_TESTS = [
  "odd",
  "even",
  "divisibleby",
  "defined",
  "undefined",
  "filter",
  "test",
  "none",
  "boolean",
  "false",
  "true",
  "integer",
  "float",
  "lower",
  "upper",
  "string",
  "mapping",
  "number",
  "sequence",
  "iterable",
  "callable",
  "sameas",
  "escaped",
  "in",
  "==",
  "eq",
  "equalto",
  "!=",
  "ne",
  ">",
  "gt",
  "greaterthan",
  "ge",
  ">=",
  "<",
  "lt",
  "lessthan",
  "<=",
  "le",
];

function render(source: string, vars: Record<string, unknown> = {}): string {
  return renderTemplate(source, vars, "test_template");
}

describe("template registry", () => {
  it("has every Jinja2 builtin filter and no other", () => {
    expect([...FILTERS.keys()].sort()).toEqual([...JINJA2_FILTERS].sort());
  });

  it("has every Jinja2 builtin test and no other", () => {
    expect([...TESTS.keys()].sort()).toEqual([...JINJA2_TESTS].sort());
  });

  it("has Jinja2's globals", () => {
    for (const name of ["range", "dict", "lipsum", "cycler", "joiner", "namespace"])
      expect(render(`{{ ${name} is callable }}`)).toBe("True");
  });
});

describe("values from the caller", () => {
  it("prints and computes with bigint variables exactly", () => {
    const vars = { n: 2n ** 70n, small: 5n };
    expect(render("{{ n }} {{ n + 1 }} {{ n * 2 }} {{ n is integer }} {{ small + 1 }} {{ [n] }}", vars)).toBe(
      "1180591620717411303424 1180591620717411303425 2361183241434822606848 True 6 [1180591620717411303424]",
    );
    expect(render("{{ n | tojson }} {{ '{:,}'.format(n) }} {{ n > 2 ** 69 }}", vars)).toBe(
      "1180591620717411303424 1,180,591,620,717,411,303,424 True",
    );
  });
});

describe("random values", () => {
  it("random picks a member of the sequence, each one eventually", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) seen.add(render("{{ items | random }}", { items: ["a", "b", "c"] }));
    expect([...seen].sort()).toEqual(["a", "b", "c"]);
    expect(render("{{ 'xyz' | random in 'xyz' }}")).toBe("True");
  });

  it("lipsum makes the paragraphs and word counts asked for", () => {
    const html = render("{{ lipsum() }}");
    const paragraphs = html.split("\n");
    expect(paragraphs).toHaveLength(5);
    for (const p of paragraphs) {
      expect(p).toMatch(/^<p>[A-Z][a-z]*.*\.<\/p>$/);
      const words = p.slice(3, -4).split(" ").length;
      expect(words).toBeGreaterThanOrEqual(20);
      expect(words).toBeLessThanOrEqual(100);
    }
    const text = render("{{ lipsum(2, false, 5, 5) }}");
    const plain = text.split("\n\n");
    expect(plain).toHaveLength(2);
    for (const p of plain) {
      expect(p.split(" ")).toHaveLength(5);
      expect(p).toMatch(/^[A-Z][a-z, ]+[a-z]\.$/);
    }
    expect(render("{{ lipsum(n=1, html=false, min=3, max=3).split() | length }}")).toBe("3");
  });
});
