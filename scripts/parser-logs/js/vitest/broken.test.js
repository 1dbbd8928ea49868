// Does not parse: the whole file fails before any test runs.
import { test, expect, describe } from "vitest";
describe("broken", () => {
  test("never runs", () => {
    expect(1).toBe(1)
  ;
});
