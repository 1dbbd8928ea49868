// Jest tests that pass, fail, are skipped or todo, with nested and duplicated names.
import { test, expect, describe } from "vitest";
const add = (a, b) => a + b;

test("adds", () => {
  expect(add(1, 2)).toBe(3);
});

test("fails to add", () => {
  expect(add(1, 2)).toBe(4);
});

test.skip("is skipped", () => {});

test.todo("is a todo");

describe("outer suite", () => {
  test("adds", () => {
    expect(add(2, 2)).toBe(4);
  });

  describe("inner suite", () => {
    test("ünïcode ✓ name", () => {
      console.log("printed by a test");
      expect(true).toBe(true);
    });

    test("slow one", async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(1).toBe(1);
    });
  });
});
