import nunjucks from "nunjucks";
import { describe, expect, it } from "vitest";
import { renderTemplate, TemplateError } from "../../src/templates/render.js";

/** mini-swe-agent's `model.observation_template` (as in its swebench config). */
const OBSERVATION = `{% if output.exception_info -%}
<exception>{{output.exception_info}}</exception>
{% endif -%}
<returncode>{{output.returncode}}</returncode>
{% if output.output | length < 10000 -%}
<output>
{{ output.output -}}
</output>
{%- else -%}
<warning>
The output of your last command was too long.
Please try a different command that produces less output.
</warning>
{%- set elided_chars = output.output | length - 10000 -%}
<output_head>
{{ output.output[:5000] }}
</output_head>
<elided_chars>
{{ elided_chars }} characters elided
</elided_chars>
<output_tail>
{{ output.output[-5000:] }}
</output_tail>
{%- endif -%}
`;

function render(source: string, vars: Record<string, unknown> = {}): string {
  return renderTemplate(source, vars, "test_template");
}

function errorOf(
  source: string,
  vars: Record<string, unknown> = {},
  name = "observation_template",
): TemplateError {
  try {
    renderTemplate(source, vars, name);
  } catch (e) {
    expect(e).toBeInstanceOf(TemplateError);
    return e as TemplateError;
  }
  throw new Error(`expected ${JSON.stringify(source)} to fail`);
}

describe("renderTemplate", () => {
  it("renders the observation template", () => {
    const out = render(OBSERVATION, { output: { output: "hi\n", returncode: 0, exception_info: "" } });
    expect(out).toBe("<returncode>0</returncode>\n<output>\nhi\n</output>");
  });

  it("counts and slices long outputs by code point", () => {
    const output = `${"😀".repeat(6000)}${"x".repeat(6000)}`;
    const out = render(OBSERVATION, { output: { output, returncode: 1, exception_info: "boom" } });
    expect(out).toContain("<exception>boom</exception>\n<returncode>1</returncode>\n<warning>");
    expect(out).toContain(`<output_head>\n${"😀".repeat(5000)}\n</output_head>`);
    expect(out).toContain("<elided_chars>\n2000 characters elided\n</elided_chars>");
    expect(out).toContain(`<output_tail>\n${"😀".repeat(0)}${"x".repeat(5000)}\n</output_tail>`);
  });

  it("does not HTML-escape", () => {
    expect(render("{{ x }}", { x: "<a href='x'>&amp;</a>" })).toBe("<a href='x'>&amp;</a>");
  });

  it("prints values like Python", () => {
    expect(render("{{ t }} {{ f }} {{ n }}", { t: true, f: false, n: null })).toBe("True False None");
    expect(render("{{ x }}", { x: ["a", 1, true, null] })).toBe("['a', 1, True, None]");
    expect(render("{{ x }}", { x: { a: 1, b: "x" } })).toBe("{'a': 1, 'b': 'x'}");
    expect(render("{{ x }}", { x: ["it's", 'say "hi"', "both ' \"", "a\nb\\"] })).toBe(
      `["it's", 'say "hi"', 'both \\' "', 'a\\nb\\\\']`,
    );
    expect(render("{{ a }} {{ b }} {{ c }} {{ d }} {{ e }}", { a: 3, b: 0.1, c: 1e21, d: -0, e: 1e-7 })).toBe(
      "3 0.1 1e+21 0 1e-07",
    );
    expect(render("{{ 4 / 2 }} {{ 1.0 }} {{ 3 | float }} {{ -0.0 }} {{ 0.1 + 0.2 }}")).toBe(
      "2.0 1.0 3.0 -0.0 0.30000000000000004",
    );
    expect(render("{{ x }} {{ y }}", { x: Number.NaN, y: Number.NEGATIVE_INFINITY })).toBe("nan -inf");
  });

  it("counts code points in length and count", () => {
    expect(
      render("{{ s | length }} {{ s | count }} {{ l | length }} {{ d | length }}", {
        s: "a😀é🇫🇷",
        l: [1, 2],
        d: { a: 1 },
      }),
    ).toBe("5 5 2 1");
  });

  it("slices strings and lists like Python", () => {
    const vars = { s: "a😀bcd", l: [0, 1, 2, 3] };
    expect(render("{{ s[:2] }}|{{ s[-2:] }}|{{ s[1:3] }}|{{ s[::2] }}|{{ s[::-1] }}|{{ s[1] }}", vars)).toBe(
      "a😀|cd|😀b|abd|dcb😀a|😀",
    );
    expect(render("{{ l[1:] }} {{ l[:-1] }} {{ l[::-2] }} {{ l[-1] }} {{ l[10:] }}", vars)).toBe(
      "[1, 2, 3] [0, 1, 2] [3, 1] 3 []",
    );
  });

  it("applies tojson like Jinja2's htmlsafe_json_dumps", () => {
    expect(render("{{ x | tojson }}", { x: { b: [1, 2.5, null], a: "<&>'é😀" } })).toBe(
      '{"a": "\\u003c\\u0026\\u003e\\u0027\\u00e9\\ud83d\\ude00", "b": [1, 2.5, null]}',
    );
  });

  it("removes exactly one trailing newline and normalises newlines", () => {
    expect(render("a")).toBe("a");
    expect(render("a\n")).toBe("a");
    expect(render("a\n\n")).toBe("a\n");
    expect(render("a\r\nb\r\n")).toBe("a\nb");
    expect(render("a\rb")).toBe("a\nb");
  });

  it("supports %-formatting", () => {
    expect(render("{{ '%s has %d items (%.1f%%)' % (name, 3, 12.345) }}", { name: "x" })).toBe(
      "x has 3 items (12.3%)",
    );
    expect(render("{{ '%(a)s-%(b)05d' % {'a': 'k', 'b': 42} }}")).toBe("k-00042");
    expect(errorOf("{{ '%s %s' % ('a',) }}").message).toBe(
      'template "observation_template" at line 1: TypeError: not enough arguments for format string',
    );
  });

  it("does not change the caller's variables", () => {
    const vars = { x: 1 };
    expect(render("{% set x = 2 %}{{ x }}", vars)).toBe("2");
    expect(vars).toEqual({ x: 1 });
  });

  it("reuses the compiled template for the same source", () => {
    const source = "{{ n }}";
    expect(render(source, { n: 1 })).toBe("1");
    expect(render(source, { n: 2 })).toBe("2");
    expect(errorOf(source, {}, "first").message).toBe("template \"first\" at line 1: 'n' is undefined");
    expect(errorOf(source, {}, "second").message).toBe("template \"second\" at line 1: 'n' is undefined");
  });
});

describe("StrictUndefined", () => {
  const vars = { output: { output: "text", returncode: 0 }, items: [1] };
  const cases: Array<[string, string]> = [
    ["{{ missing }}", "'missing' is undefined"],
    ["{% if missing %}x{% endif %}", "'missing' is undefined"],
    ["{% if output.returncode == 0 and missing %}x{% endif %}", "'missing' is undefined"],
    ["{{ 'y' if missing else 'n' }}", "'missing' is undefined"],
    ["{{ missing | length }}", "'missing' is undefined"],
    ["{{ missing | upper }}", "'missing' is undefined"],
    ["{{ missing.x }}", "'missing' is undefined"],
    ["{{ missing['x'] }}", "'missing' is undefined"],
    ["{{ missing[:5] }}", "'missing' is undefined"],
    ["{{ output.nope }}", "'dict object' has no attribute 'nope'"],
    ["{{ output['nope'] }}", "'dict object' has no attribute 'nope'"],
    ["{{ output.nope.deeper }}", "'dict object' has no attribute 'nope'"],
    ["{{ output.output.nope }}", "'str object' has no attribute 'nope'"],
    ["{{ items[3] }}", "list object has no element 3"],
    ["{{ missing ~ 'x' }}", "'missing' is undefined"],
    ["{{ missing + 1 }}", "'missing' is undefined"],
    ["{{ missing == 1 }}", "'missing' is undefined"],
    ["{{ 1 in missing }}", "'missing' is undefined"],
    ["{% for x in missing %}{% endfor %}", "'missing' is undefined"],
    ["{{ missing() }}", "'missing' is undefined"],
    ["{% set y = missing %}{{ y }}", "'missing' is undefined"],
    ["{{ [] | first }}", "No first item, sequence was empty."],
  ];
  for (const [source, message] of cases) {
    it(`fails on ${source}`, () => {
      const error = errorOf(source, vars);
      expect(error.message).toBe(`template "observation_template" at line 1: ${message}`);
      expect(error.templateName).toBe("observation_template");
    });
  }

  // The lines Jinja2 3.1.6's traceback names for the same templates (innermost frame).
  const lines: Array<[string, number, string]> = [
    ["a\nb {{ x }}", 2, "'x' is undefined"],
    ["line1\n{% if y %}\n{{ outputs }}{% endif %}", 3, "'outputs' is undefined"],
    ["{% for i in [1,2] %}\n\n{{ i.foo.bar }}{% endfor %}", 3, "'int object' has no attribute 'foo'"],
    ["1\n2\n{{ 1 / 0 }}", 3, "ZeroDivisionError: division by zero"],
    ["{% macro m() %}\nA\n{{ zz }}{% endmacro %}\nx\n{{ m() }}", 3, "'zz' is undefined"],
    ["{% set q = nope %}\n\n{{ q }}", 3, "'nope' is undefined"],
    ["ok {{ y }}\n{{ {'a': 1} | attr('a') }}", 2, "'dict object' has no attribute 'a'"],
  ];
  for (const [source, line, message] of lines) {
    it(`names line ${line} of ${JSON.stringify(source)}`, () => {
      const error = errorOf(source, { y: 1 }, "instance_template");
      expect(error.message).toBe(`template "instance_template" at line ${line}: ${message}`);
      expect(error.lineno).toBe(line);
    });
  }

  it("allows `is defined`, `default` and short-circuiting", () => {
    expect(
      render(
        "{{ missing is defined }} {{ missing is undefined }} {{ missing | default('y') }} {{ output.nope | d('z') }} " +
          "{{ missing is defined and missing }} {% if missing is not defined %}ok{% endif %}",
        vars,
      ),
    ).toBe("False True y z False ok");
  });
});

describe("syntax errors", () => {
  const cases: Array<[string, number, string]> = [
    ["a\nb\n{% if x %}\n{% endfor %}", 4, "unknown block tag: endfor"],
    ["a\n\n{{ x | nosuch }}", 3, "no filter named 'nosuch'"],
    ["{{ x is nosuch }}", 1, "no test named 'nosuch'"],
    ["line\n{{ 1 + }}", 2, "unexpected token"],
    ["{# never closed", 1, "expected end of comment"],
    ["{% raw %}never closed", 1, "missing end of raw directive"],
    ["{% if x %}", 1, "expected elif, else, or endif"],
  ];
  for (const [source, line, text] of cases) {
    it(`reports ${JSON.stringify(source)} on one line with the template name and line`, () => {
      const error = errorOf(source, {}, "instance_template");
      expect(error.message).toMatch(
        new RegExp(`^template "instance_template": syntax error at line ${line}: .*${text}`),
      );
      expect(error.message).not.toContain("\n");
      expect(error.lineno).toBe(line);
    });
  }

  it("rejects syntax that is nunjucks-only or that swerun does not support", () => {
    expect(errorOf("{% switch x %}{% endswitch %}").message).toContain("unknown tag 'switch'");
    expect(errorOf("{{ 1 === 1 }}").message).toContain("unexpected operator '==='");
    expect(errorOf("{% ifAsync x %}{% endif %}").message).toContain("unknown tag 'ifAsync'");
  });
});

describe("render limits", () => {
  it("stops a render at its size limit and a range too long to hold, each in one line naming the template", () => {
    const big = errorOf(
      "{% for i in range(100000) %}{% for j in range(100000) %}{{ 'x' * 1000 }}{% endfor %}{% endfor %}",
    );
    expect(big.message).toMatch(
      /^template "observation_template" at line 1: the rendered text passed 67108864 characters/,
    );
    expect(errorOf("{{ 'x' * 70000000 }}").message).toContain("the rendered text passed 67108864 characters");
    expect(errorOf("{% for i in range(0, 10**9, 2) %}{% endfor %}").message).toContain(
      "range() of 500000000 numbers is more than a template may loop over (10000000)",
    );
    expect(render("{{ range(3, 0, -1) | list }} {{ range(10000000) | length }}")).toBe("[3, 2, 1] 10000000");
  });
});

describe("isolation from nunjucks", () => {
  it("leaves the global nunjucks runtime and default environment untouched", () => {
    const runtime = (nunjucks as unknown as { runtime: Record<string, unknown> }).runtime;
    const before = { ...runtime };
    render("{{ x }} {{ y[1:] }}", { x: true, y: "abc" });
    expect({ ...runtime }).toEqual(before);
    expect(nunjucks.renderString("{{ x }} {{ y }}", { x: true, y: [1, 2] })).toBe("true 1,2");
  });
});
