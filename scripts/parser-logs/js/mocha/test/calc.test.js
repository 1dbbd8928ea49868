// Mocha tests that pass, fail, are pending, with nested suites, output and a slow test.
const assert = require("node:assert");

describe("Calculator", () => {
  it("adds", () => {
    assert.strictEqual(1 + 1, 2);
  });

  it("fails to subtract", () => {
    assert.strictEqual(3 - 1, 1);
  });

  it.skip("is pending", () => {});

  describe("with ünïcode ✓ names", () => {
    it("multiplies", () => {
      console.log("printed by a test");
      console.log("<svg><g><path/></g></svg> and an unclosed <b>tag");
      assert.strictEqual(2 * 3, 6);
    });

    it("is slow", async () => {
      await new Promise((resolve) => setTimeout(resolve, 120));
    });

    it("throws a TypeError", () => {
      null.property;
    });
  });
});

describe("Other", () => {
  it("adds", () => {
    assert.deepStrictEqual({ a: [1, 2] }, { a: [1, 3] });
  });
});
