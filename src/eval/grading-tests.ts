import { join } from "node:path";
import { chaosPoint } from "../util/chaos.js";
import { decodeOutput, type ExecResult } from "./container-exec.js";
import { EvalOutputSplitter } from "./eval-output-split.js";
import { testsExecArgv } from "./eval-script.js";
import type { GradeOptions } from "./grade-instance.js";
import type { GradingPlace } from "./grading-apply.js";
import type { GradingBox } from "./grading-container.js";
import { GradingError, InfraFailure } from "./grading-errors.js";
import { CONTAINER_EVAL_SCRIPT, CONTAINER_WORKDIR, LOG_FILES } from "./harness-constants.js";
import { newToken } from "./patch-apply.js";
import { TestLogWriter } from "./test-log.js";

/** What the tests' exec left: its result, the diff printed after the tests, test_output.txt's writer (not committed yet). */
export interface TestRun {
  run: ExecResult;
  diff?: Buffer;
  testLog: TestLogWriter;
  /** test_output.txt. */
  outputPath: string;
  /** Wall time of the eval script. */
  testSeconds: number;
}

/**
 * Runs the eval script (and the diff after it) in the container, its output going to test_output.txt's temp
 * file as it arrives (never held whole): the caller commits or aborts `testLog`. A log that cannot be
 * written (a full disk) fails once the exec is over, its temp file removed.
 */
async function execTests(
  container: GradingBox,
  outputPath: string,
  token: string,
  options: GradeOptions,
): Promise<{ run: ExecResult; diff?: Buffer; testLog: TestLogWriter }> {
  const testLog = new TestLogWriter(outputPath);
  try {
    const splitter = new EvalOutputSplitter(token, (data) => testLog.write(data));
    let unwritable: { error: unknown } | undefined;
    const run = await container.exec(testsExecArgv(CONTAINER_EVAL_SCRIPT, CONTAINER_WORKDIR, token), {
      timeoutSeconds: options.timeoutSeconds,
      ...(options.signal ? { signal: options.signal } : {}),
      onChunk: (data, stderr) => {
        if (unwritable) return;
        try {
          splitter.push(data, stderr);
        } catch (error) {
          unwritable = { error };
        }
      },
    });
    if (unwritable) throw unwritable.error;
    return { run, ...splitter.end(), testLog };
  } catch (error) {
    testLog.abort();
    throw error;
  }
}

/** The tests phase: the eval script run with its timeout, its output streamed to test_output.txt's temp file. */
export async function runTests(
  place: GradingPlace,
  options: GradeOptions,
  phase: (phase: string) => void,
): Promise<TestRun> {
  phase("running tests");
  chaosPoint("grading-tests");
  const testStarted = Date.now();
  const diffToken = newToken();
  const outputPath = join(place.logDir, LOG_FILES.testOutput);
  const { run, diff, testLog } = await execTests(place.container, outputPath, diffToken, options);
  return {
    run,
    ...(diff === undefined ? {} : { diff }),
    testLog,
    outputPath,
    testSeconds: (Date.now() - testStarted) / 1000,
  };
}

/**
 * After the tests: test_output.txt committed (with the harness's timeout line) when the run can be graded;
 * an interrupted run, a daemon that went away, a timeout or tests cut off throw (no verdict, or the harness's
 * error). Logs `git diff` after the tests against `diffBefore`.
 */
export async function settleTests(
  place: GradingPlace,
  tests: TestRun,
  options: GradeOptions,
  diffBefore: string,
): Promise<void> {
  const { container, log } = place;
  const { run, diff, testLog, outputPath } = tests;
  if (run.aborted) {
    testLog.abort();
    throw new InfraFailure("interrupted", "interrupted");
  }
  log.info(`Test runtime: ${tests.testSeconds.toFixed(2)} seconds`);
  // Output that ends before the script did, with no timeout: a container that died (graded on what it
  // printed, as the harness does), or a daemon that went away (no verdict: nothing is written).
  if (diff === undefined && !run.timedOut) {
    const answers = !/is gone/.test((await container.stopped()) ?? "");
    if (!answers) {
      testLog.abort();
      throw new GradingError("the Docker daemon stopped answering while the tests ran (no verdict)");
    }
  }
  try {
    testLog.commit(run.timedOut ? `\n\nTimeout error: ${options.timeoutSeconds} seconds exceeded.` : "");
  } catch (error) {
    testLog.abort();
    throw error;
  }
  log.info(`Test output for ${options.instance.instance_id} written to ${outputPath}`);
  if (run.timedOut) throw new GradingError(`Test timed out after ${options.timeoutSeconds} seconds.`);
  // Tests cut off before the eval script ended (its container killed from outside, the daemon gone)
  // give no verdict.
  if (diff === undefined)
    throw new InfraFailure(
      "container_unavailable",
      (await container.stopped()) ?? "the tests' exec ended before the eval script did",
    );

  const diffAfter = diff ? decodeOutput(diff).trim() : "";
  log.info(`Git diff after:\n${diffAfter}`);
  if (diffAfter !== diffBefore) log.info("Git diff changed after running eval script");
}
