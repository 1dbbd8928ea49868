// Crashes the process in the middle of the run.
import { test } from "node:test";

test("before the crash", () => {});

test("exits the process", () => {
  process.exit(3);
});
