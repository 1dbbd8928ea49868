import { describe, expect, it } from "vitest";
import { jsonWithFloats } from "../../src/util/float-json.js";

describe("jsonWithFloats", () => {
  it("writes the dollar keys' numbers as Python's json.dumps writes floats, and nothing else", () => {
    // Python: json.dumps({"cost": 1.0, "x": [{"instance_cost": 1e16, "cost_limit": 1e-7,
    // "cost_per_call": -2.5}], "n": 3, "s": "a\n  \"cost\": 1"}, indent=2)
    const python = [
      "{",
      '  "cost": 1.0,',
      '  "x": [',
      "    {",
      '      "instance_cost": 1e+16,',
      '      "cost_limit": 1e-07,',
      '      "cost_per_call": -2.5',
      "    }",
      "  ],",
      '  "n": 3,',
      '  "s": "a\\n  \\"cost\\": 1"',
      "}",
    ].join("\n");
    const value = {
      cost: 1,
      x: [{ instance_cost: 1e16, cost_limit: 1e-7, cost_per_call: -2.5 }],
      n: 3,
      s: 'a\n  "cost": 1',
    };
    expect(jsonWithFloats(value)).toBe(python);
  });

  it("leaves a dollar key whose value is not a finite number as JSON writes it", () => {
    const value = { cost: Number.NaN, instance_cost: "1", cost_limit: [1, 2], cost_per_call: { cost: 0 } };
    expect(JSON.parse(jsonWithFloats(value))).toEqual({
      cost: null,
      instance_cost: "1",
      cost_limit: [1, 2],
      cost_per_call: { cost: 0 },
    });
    expect(jsonWithFloats(value)).toContain('"cost": 0.0');
    expect(jsonWithFloats(value)).toContain("    1,\n    2\n");
  });
});
