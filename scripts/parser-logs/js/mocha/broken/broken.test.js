// Does not load: mocha stops before running anything.
describe("broken", () => {
  it("never runs", () => {
