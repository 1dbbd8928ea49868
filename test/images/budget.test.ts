import { describe, expect, it } from "vitest";
import { ImageBudget } from "../../src/images/budget.js";

describe("ImageBudget", () => {
  it("counts pulls under way, then what they took; removes least recently used first, only what it may", () => {
    const budget = new ImageBudget(100);
    budget.reserve("a", 40);
    expect(budget.fits(60)).toBe(true);
    expect(budget.fits(61)).toBe(false);
    budget.settle("a", 45);
    budget.reserve("b", 30);
    budget.settle("b", 30);
    budget.reserve("c", 20);
    budget.settle("c", 20);
    expect(budget.used).toBe(95);
    expect(budget.peak).toBe(95);
    budget.touch("a"); // a is used again: b is now the oldest
    expect(budget.victims(30, () => true)).toEqual(["b"]);
    expect(budget.victims(30, (image) => image !== "b")).toEqual(["c", "a"]);
    expect(budget.victims(200, () => true)).toBeUndefined();
    expect(budget.victims(5, () => false)).toEqual([]);
    budget.forget("b");
    expect(budget.used).toBe(65);
    expect(budget.removable((image) => image !== "a")).toEqual(["c"]);
  });

  it("a failed pull holds nothing; without a limit everything fits", () => {
    const budget = new ImageBudget(10);
    budget.reserve("a", 8);
    budget.settle("a", undefined);
    expect(budget.used).toBe(0);
    expect(budget.holds("a")).toBe(false);
    const unlimited = new ImageBudget(undefined);
    unlimited.settle("big", 1e15);
    expect(unlimited.fits(1e15)).toBe(true);
    expect(unlimited.victims(1e15, () => true)).toEqual([]);
  });
});
