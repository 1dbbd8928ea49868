// A second file: its output interleaves with the first one's when workers run in parallel.
describe("other", () => {
  test("passes", () => {
    process.stdout.write("no newline from a test");
    expect(1).toBe(1);
  });
  test("throws", () => {
    throw new Error("boom");
  });
});
