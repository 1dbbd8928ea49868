// Browser tests that pass, fail and are skipped, with nested suites and a duplicated title.
function check(value, message) {
  if (!value) throw new Error(message || "check failed");
}

describe("Calculator", function () {
  it("adds", function () {
    check(1 + 1 === 2);
  });

  it("fails to subtract", function () {
    check(3 - 1 === 1, "3 - 1 is not 1");
  });

  it.skip("is skipped", function () {});

  describe("nested ünïcode suite", function () {
    it("adds", function () {
      console.log("printed in the browser");
      check(2 + 2 === 4);
    });

    it("throws", function () {
      null.property;
    });
  });
});

describe("Other", function () {
  it("passes too", function () {
    check(true);
  });
});
