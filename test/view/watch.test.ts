import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { watchFolders } from "../../src/view/watch.js";
import { tempDir } from "../helpers/tmp.js";

it("watching a folder for many intervals leaves one abort listener at a time (no MaxListenersExceededWarning)", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "run.json"), "{}");
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on("warning", onWarning);
  const stop = new AbortController();
  let rebuilds = 0;
  const watching = watchFolders([dir], [], () => (rebuilds += 1), stop.signal, 2);
  // 40 intervals, one change in the middle.
  await new Promise((resolve) => setTimeout(resolve, 40));
  writeFileSync(join(dir, "run.json"), '{"changed": true}');
  await new Promise((resolve) => setTimeout(resolve, 60));
  stop.abort();
  await watching;
  await new Promise((resolve) => setImmediate(resolve));
  process.off("warning", onWarning);
  expect(warnings).toEqual([]);
  expect(rebuilds).toBe(1);
});
