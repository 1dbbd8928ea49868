import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runBatch } from "../../src/batch/batch.js";
import type { BatchDisplay } from "../../src/batch/display.js";
import { loadConfig } from "../../src/config/load.js";
import { type Instance, readDatasetFile } from "../../src/datasets/dataset.js";
import { instancePreparer } from "../../src/fixture-images/instance-preparer.js";
import { writeDataset } from "../helpers/datasets.js";
import { tempDir } from "../helpers/tmp.js";

/** A display that records what it is told, and calls `onStart` as an instance starts, `onEvent` on its events. */
function recordingDisplay(
  onStart: (id: string) => void,
  onEvent: (type: string) => void,
): BatchDisplay & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    start: () => {},
    instanceStart: (_worker, id) => {
      lines.push(`start ${id}`);
      onStart(id);
    },
    event: (_worker, event) => onEvent(event.type),
    instanceEnd: (_worker, result) => lines.push(`end ${result.instance_id} ${result.exit_status}`),
    message: (line) => lines.push(line),
    stop: () => {},
  };
}

async function batch(
  before: string,
  onStart: (id: string) => void,
  onEvent: (type: string) => void = () => {},
) {
  const dir = tempDir();
  const instances = (await readDatasetFile(writeDataset(dir, 3, before))) as Instance[];
  const outputDir = join(dir, "out");
  const display = recordingDisplay(onStart, onEvent);
  const summary = await runBatch({
    instances,
    config: loadConfig(["swebench", "swebench-demo", "environment.environment_class=local"]),
    outputDir,
    workers: 1,
    redoExisting: false,
    runId: `batch-run-${process.pid}`,
    subset: dir,
    split: "test",
    display,
    prepare: instancePreparer({}, dir),
  });
  const record = JSON.parse(readFileSync(join(outputDir, "run.json"), "utf8"));
  return { summary, record, lines: display.lines };
}

describe("BatchRun's states", () => {
  it("running → interrupted (first Ctrl-C): the running instance finishes, no new one starts", async () => {
    const { summary, record, lines } = await batch("true", (id) => {
      if (id === "test__calc-1") process.emit("SIGINT");
    });
    expect(summary.interrupted).toBe(true);
    expect(Object.fromEntries(summary.statuses)).toEqual({ Submitted: ["test__calc-1"] });
    expect(lines.filter((line) => line.startsWith("start "))).toEqual(["start test__calc-1"]);
    expect(lines).toContain(
      "Ctrl-C: no new instances will start; running ones finish. Press Ctrl-C again to stop them.",
    );
    expect(record.status).toBe("interrupted");
    expect(record.exit_statuses).toEqual({ Submitted: 1 });
  });

  it("running → stopping (SIGTERM): the running agent stops as Interrupted, and the signal handlers go", async () => {
    const listeners = process.listenerCount("SIGTERM");
    let sent = false;
    const { summary, record } = await batch(
      "sleep 30",
      () => {},
      (type) => {
        // As the first command (sleep 30) starts.
        if (type === "action_start" && !sent) {
          sent = true;
          process.emit("SIGTERM");
        }
      },
    );
    expect(summary.interrupted).toBe(true);
    expect(Object.fromEntries(summary.statuses)).toEqual({ Interrupted: ["test__calc-1"] });
    expect(record.cases["test__calc-1"].exit_status).toBe("Interrupted");
    expect(process.listenerCount("SIGTERM")).toBe(listeners);
  });
});
