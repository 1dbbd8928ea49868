import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { GradingError, gradingFailure, InfraFailure } from "../../src/eval/grading-errors.js";
import { LOG_FILES } from "../../src/eval/harness-constants.js";
import { InstanceLog } from "../../src/eval/instance-log.js";
import { tempDir } from "../helpers/tmp.js";

/** A log folder holding an earlier grading's report.json, and its run_instance.log. */
function logFolder(): { dir: string; log: InstanceLog } {
  const dir = tempDir();
  writeFileSync(join(dir, LOG_FILES.report), "{}\n");
  return { dir, log: new InstanceLog(join(dir, LOG_FILES.instanceLog)) };
}

/** The error a real connection to a closed port fails with. */
function refusedConnection(): Promise<Error> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port: 1 });
    socket.on("error", resolve);
  });
}

describe("gradingFailure (how a grading that threw ends)", () => {
  it("a harness error: its first line, no infra failure, an earlier report.json removed, logged whole", () => {
    const { dir, log } = logFolder();
    const failure = gradingFailure(
      new GradingError(">>>>> Patch Apply Failed:\nhunk 1 failed"),
      log,
      "x-1",
      dir,
    );
    expect(failure).toEqual({ error: ">>>>> Patch Apply Failed:" });
    expect(existsSync(join(dir, LOG_FILES.report))).toBe(false);
    expect(readFileSync(log.path, "utf8")).toMatch(
      /ERROR - Error in evaluating x-1: >>>>> Patch Apply Failed:\nhunk 1 failed\n$/,
    );
  });

  it("an infra failure keeps its reason (said once when it is the whole message) and report.json", () => {
    const { dir, log } = logFolder();
    expect(gradingFailure(new InfraFailure("interrupted", "interrupted"), log, "x-1", dir)).toEqual({
      error: "interrupted",
      infra_failure: "interrupted",
    });
    expect(gradingFailure(new InfraFailure("container_unavailable", "gone"), log, "x-1", dir)).toEqual({
      error: "container_unavailable: gone",
      infra_failure: "container_unavailable",
    });
    expect(existsSync(join(dir, LOG_FILES.report))).toBe(true);
  });

  it("a file swerun could not write is output_unwritable; a refused connection, the daemon's, container_unavailable", async () => {
    const { dir, log } = logFolder();
    let unwritable: unknown;
    try {
      writeFileSync(join(dir, "missing", "file"), "");
    } catch (error) {
      unwritable = error;
    }
    expect(gradingFailure(unwritable, log, "x-1", dir)).toMatchObject({
      error: expect.stringMatching(/^output_unwritable: Error: ENOENT/),
      infra_failure: "output_unwritable",
    });
    expect(gradingFailure(await refusedConnection(), log, "x-1", dir)).toMatchObject({
      error: expect.stringMatching(/^container_unavailable: Error: connect ECONNREFUSED/),
      infra_failure: "container_unavailable",
    });
  });

  it("an error whose text the harness classifies takes its reason", () => {
    const { dir, log } = logFolder();
    const failure = gradingFailure(new Error("OutOfMemoryError in the tests"), log, "x-1", dir);
    expect(failure).toEqual({
      error: "out_of_memory: Error: OutOfMemoryError in the tests",
      infra_failure: "out_of_memory",
    });
  });
});
