// node:test cases that pass, fail, skip, todo, with subtests (run with --test-reporter=tap).
import assert from "node:assert";
import { describe, it, test } from "node:test";

test("adds", () => {
  assert.strictEqual(1 + 1, 2);
});

test("fails", () => {
  assert.strictEqual(1 + 1, 3);
});

test("skipped", { skip: "not here" }, () => {});

test("todo", { todo: true }, () => {});

describe("suite with ünïcode", () => {
  it("nested passes", () => {
    process.stdout.write("no newline ");
  });
  it("nested fails", () => {
    throw new Error("boom");
  });
});
