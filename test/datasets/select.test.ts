import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  applySlice,
  parseInstanceIds,
  selectInstances,
  shuffleLikePython,
} from "../../src/datasets/select.js";
import { UserError } from "../../src/errors.js";
import { tempDir } from "../helpers/tmp.js";

const ids = (...names: string[]) => names.map((instance_id) => ({ instance_id }));
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("applySlice", () => {
  // Expected values printed by CPython: list(range(10))[slice(*values)], values parsed as mini-swe-agent does.
  const cases: Array<[string, number[]]> = [
    ["0:5", [0, 1, 2, 3, 4]],
    ["5", [0, 1, 2, 3, 4]],
    ["-3:", [7, 8, 9]],
    ["::-1", [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]],
    ["-1:-4:-1", [9, 8, 7]],
    ["2:100", [2, 3, 4, 5, 6, 7, 8, 9]],
    ["100:", []],
    ["-100:3", [0, 1, 2]],
    ["1:8:3", [1, 4, 7]],
    ["::2", [0, 2, 4, 6, 8]],
    ["8:2:-2", [8, 6, 4]],
    [":-2", [0, 1, 2, 3, 4, 5, 6, 7]],
    [":", range(10)],
    ["-100::-1", []],
    ["100::-1", [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]],
    ["3:3", []],
    ["5:2", []],
  ];
  it.each(cases)("slices %s like Python", (spec, expected) => {
    expect(applySlice(range(10), spec)).toEqual(expected);
  });

  it("rejects a zero step, a non-integer and too many parts", () => {
    expect(() => applySlice(range(3), "::0")).toThrow(/--slice "::0": step cannot be zero/);
    expect(() => applySlice(range(3), "a:2")).toThrow(/--slice "a:2": "a" is not an integer/);
    expect(() => applySlice(range(3), "1:2:3:4")).toThrow(UserError);
  });
});

describe("shuffleLikePython", () => {
  // Expected values printed by CPython: random.seed(42); random.shuffle(list(range(n))).
  it("matches CPython's random.shuffle with seed 42", () => {
    const ten = range(10);
    shuffleLikePython(ten, 42);
    expect(ten).toEqual([7, 3, 2, 8, 5, 6, 9, 4, 0, 1]);
    const many = range(2294);
    shuffleLikePython(many, 42);
    expect(many.slice(0, 12)).toEqual([737, 1931, 1290, 1905, 314, 1654, 924, 609, 2217, 2010, 228, 555]);
    const checksum = many.reduce((sum, value, i) => (sum * 31 + value * (i + 1)) % 1_000_000_007, 0);
    expect(checksum).toBe(406723577);
  });

  it("leaves empty and single-element lists alone", () => {
    const empty: number[] = [];
    shuffleLikePython(empty, 42);
    expect(empty).toEqual([]);
    const one = [1];
    shuffleLikePython(one, 42);
    expect(one).toEqual([1]);
  });
});

describe("selectInstances", () => {
  const dataset = ids("django__django-2", "astropy__astropy-1", "django__django-1", "sympy__sympy-1");

  it("keeps dataset order without --shuffle and sorts before shuffling with it", () => {
    expect(selectInstances(dataset, {}).map((i) => i.instance_id)).toEqual(dataset.map((i) => i.instance_id));
    const shuffled = selectInstances(dataset, { shuffle: true });
    const sortedFirst = selectInstances([...dataset].reverse(), { shuffle: true });
    expect(shuffled).toEqual(sortedFirst);
    // CPython: random.seed(42); random.shuffle([0, 1, 2, 3]) gives [2, 1, 3, 0] over the sorted ids.
    expect(shuffled.map((i) => i.instance_id)).toEqual([
      "django__django-2",
      "django__django-1",
      "sympy__sympy-1",
      "astropy__astropy-1",
    ]);
  });

  it("matches the filter at the start of the id only", () => {
    expect(selectInstances(dataset, { filter: "django" }).map((i) => i.instance_id)).toEqual([
      "django__django-2",
      "django__django-1",
    ]);
    expect(selectInstances(dataset, { filter: "django-1" })).toEqual([]);
    expect(selectInstances(dataset, { filter: ".*-1$|sympy" }).map((i) => i.instance_id)).toEqual([
      "astropy__astropy-1",
      "django__django-1",
      "sympy__sympy-1",
    ]);
    expect(() => selectInstances(dataset, { filter: "(" })).toThrow(
      /--filter "\(": invalid regular expression/,
    );
  });

  it("filters before slicing", () => {
    expect(selectInstances(dataset, { filter: "django", slice: "1:" }).map((i) => i.instance_id)).toEqual([
      "django__django-1",
    ]);
  });

  it("keeps the listed ids in dataset order and names unknown ids", () => {
    const picked = selectInstances(dataset, { instanceIds: "sympy__sympy-1, django__django-2" });
    expect(picked.map((i) => i.instance_id)).toEqual(["django__django-2", "sympy__sympy-1"]);
    expect(() => selectInstances(dataset, { instanceIds: "sympy__sympy-1,nope-1,nope-2" })).toThrow(
      "--instance-ids: not in the dataset: nope-1, nope-2",
    );
  });

  it("reads ids from a file, one per line", () => {
    const file = join(tempDir(), "ids.txt");
    writeFileSync(file, "# wanted\nastropy__astropy-1\n\n  django__django-1  \r\n");
    expect(parseInstanceIds(file)).toEqual(["astropy__astropy-1", "django__django-1"]);
    expect(selectInstances(dataset, { instanceIds: file }).map((i) => i.instance_id)).toEqual([
      "astropy__astropy-1",
      "django__django-1",
    ]);
    writeFileSync(file, "\n# nothing\n");
    expect(() => parseInstanceIds(file)).toThrow(`--instance-ids: no instance ids in ${file}`);
    expect(() => parseInstanceIds(" , ")).toThrow('--instance-ids: no instance ids in " , "');
  });
});

describe("--shard", () => {
  const items = Array.from({ length: 10 }, (_, i) => ({ instance_id: `id-${String(i).padStart(2, "0")}` }));

  it("splits the selection into balanced shards that cover it exactly once", () => {
    const shards = [1, 2, 3, 4].map((i) =>
      selectInstances(items, { shard: `${i}/4` }).map((x) => x.instance_id),
    );
    expect(shards.map((shard) => shard.length)).toEqual([3, 3, 2, 2]);
    expect(shards.flat().sort()).toEqual(items.map((x) => x.instance_id));
    expect(shards[1]).toEqual(["id-01", "id-05", "id-09"]);
    expect(selectInstances(items, { shard: "2/4" })).toEqual(selectInstances([...items], { shard: "2/4" }));
  });

  it("applies after the filter, slice and shuffle", () => {
    const sliced = selectInstances(items, { slice: "2:8", shuffle: true, shard: "1/2" });
    const whole = selectInstances(items, { slice: "2:8", shuffle: true });
    expect(sliced).toEqual(whole.filter((_, i) => i % 2 === 0));
  });

  it.each(["0/4", "5/4", "1/0", "x", "1-2"])("refuses %s", (spec) => {
    expect(() => selectInstances(items, { shard: spec })).toThrow(
      `--shard "${spec}": expected i/n with 1 ≤ i ≤ n, e.g. 2/4`,
    );
  });
});
