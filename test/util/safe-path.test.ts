import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ID_MAX_BYTES, nameProblem, pathInside } from "../../src/util/safe-path.js";

describe("nameProblem", () => {
  it("takes ordinary ids and names, up to the byte limit", () => {
    for (const name of ["django__django-11099", "a.b-c_d", "..a", "a..", "-lead", "é".repeat(100)])
      expect(nameProblem(name, ID_MAX_BYTES)).toBeUndefined();
  });

  it("names why a name is not one safe file name", () => {
    expect(nameProblem("")).toBe("it is empty");
    expect(nameProblem("..")).toBe('".." names a folder step, not a name');
    expect(nameProblem(".")).toBe('"." names a folder step, not a name');
    expect(nameProblem("../../x")).toBe("it holds a /");
    expect(nameProblem("a\0b")).toBe("it holds a NUL character");
    expect(nameProblem("a\nb")).toBe("it holds a control character");
    expect(nameProblem("x".repeat(256))).toBe("it has 256 bytes, more than 255");
    expect(nameProblem("é".repeat(101), ID_MAX_BYTES)).toBe("it has 202 bytes, more than 200");
  });
});

describe("pathInside", () => {
  it("joins parts that stay inside the folder", () => {
    expect(pathInside("/out", "a", "a.traj.json")).toBe(join("/out", "a", "a.traj.json"));
    expect(pathInside("/data", "fixtures/calc")).toBe("/data/fixtures/calc");
    expect(pathInside("out", "..a")).toBe(join("out", "..a"));
  });

  it("refuses a `..` step, an absolute part, a NUL, an empty or `.` part, wherever the path would end", () => {
    for (const parts of [
      ["..", "x"],
      ["a", "../b"],
      ["../../victim/x/x"],
      ["/etc"],
      ["a\0b"],
      [""],
      ["."],
      ["a/.."],
    ])
      expect(() => pathInside("/out/run", ...parts), parts.join(",")).toThrow(
        "would be a path outside /out/run: refused",
      );
    expect(() => pathInside("/out/run", "..", "x")).toThrow(
      '"../x" would be a path outside /out/run: refused',
    );
  });
});
