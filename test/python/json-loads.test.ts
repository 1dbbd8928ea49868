import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PythonJsonError, pythonJsonLoads } from "../../src/python/json-loads.js";
import { packageRoot } from "../../src/util/package-root.js";

/** Inputs and Python's json.loads errors, recorded by scripts/gen-parity-corpus.py. */
const cases = JSON.parse(
  readFileSync(join(packageRoot(), "test", "fixtures", "parity", "json-errors.json"), "utf8"),
) as Array<{ input: string; error: string | null }>;

function errorOf(input: string): unknown {
  try {
    pythonJsonLoads(input);
    return null;
  } catch (error) {
    return error;
  }
}

describe("pythonJsonLoads: Python's json.loads, error texts included", () => {
  for (const { input, error } of cases) {
    it(JSON.stringify(input), () => {
      const thrown = errorOf(input);
      if (error === null) {
        expect(thrown).toBeNull();
      } else {
        expect(thrown).toBeInstanceOf(PythonJsonError);
        expect((thrown as Error).message).toBe(error);
      }
    });
  }

  it("reads values as Python does, NaN and Infinity included", () => {
    expect(pythonJsonLoads('{"command": "echo \\"hi\\"", "n": [1, 2.5, -Infinity]}')).toEqual({
      command: 'echo "hi"',
      n: [1, 2.5, Number.NEGATIVE_INFINITY],
    });
    expect(pythonJsonLoads('"\\ud83d\\ude00 \\u00e9"')).toBe("😀 é");
  });
});
