import { expect, it } from "vitest";
import { collectGarbage } from "../../src/util/collect-garbage.js";

/** The end of the current job: a WeakRef's target is kept until then after it was made or dereferenced. */
const nextJob = () => new Promise((resolve) => setTimeout(resolve, 0));

it("collects what nothing holds any more, at once", async () => {
  const ref = new WeakRef({ text: "x".repeat(100_000) });
  await nextJob();
  expect(ref.deref()).toBeDefined();
  await nextJob();
  collectGarbage();
  expect(ref.deref()).toBeUndefined();
});
