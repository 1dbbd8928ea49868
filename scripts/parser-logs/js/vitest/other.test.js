// A second file: its output interleaves with the first one's when workers run in parallel.
import { test, expect, describe } from "vitest";
describe("other", () => {
  test("passes", () => {
    process.stdout.write("no newline from a test");
    expect(1).toBe(1);
  });
  test("throws", () => {
    throw new Error("boom");
  });
});
