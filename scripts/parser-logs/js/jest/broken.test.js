// Does not parse: the whole file fails before any test runs.
describe("broken", () => {
  test("never runs", () => {
    expect(1).toBe(1)
  ;
});
