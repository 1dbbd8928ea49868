import { getEventListeners } from "node:events";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { watchFolders } from "../../src/view/watch.js";
import { waitFor } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

it("watching a folder for many intervals leaves one abort listener at a time (no MaxListenersExceededWarning)", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, "run.json"), "{}");
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on("warning", onWarning);
  const stop = new AbortController();
  // Count the watcher's waits (each adds one abort listener), and see that one listener at most is ever there.
  let waits = 0;
  let most = 0;
  const add = stop.signal.addEventListener.bind(stop.signal);
  stop.signal.addEventListener = ((...args: Parameters<typeof add>) => {
    waits += 1;
    add(...args);
    most = Math.max(most, getEventListeners(stop.signal, "abort").length);
  }) as typeof add;
  let rebuilds = 0;
  const watching = watchFolders([dir], [], () => (rebuilds += 1), stop.signal, 2);
  // 40 intervals, one change in the middle.
  await waitFor(() => waits >= 20);
  writeFileSync(join(dir, "run.json"), '{"changed": true}');
  await waitFor(() => rebuilds === 1 && waits >= 40);
  stop.abort();
  await watching;
  await new Promise((resolve) => setImmediate(resolve));
  process.off("warning", onWarning);
  expect(warnings).toEqual([]);
  expect(rebuilds).toBe(1);
  expect(most).toBe(1);
});
