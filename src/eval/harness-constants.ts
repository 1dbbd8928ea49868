/**
 * The SWE-bench 5.x harness's fixed strings and names: log markers, test statuses, file names. swerun writes
 * and reads the same ones, so its logs and reports can be checked with the official tools.
 */

/** A test's outcome in a status map, in the order the pytest-style parsers try them as line prefixes. */
export const TEST_STATUSES = ["FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL"] as const;
export type TestStatus = (typeof TEST_STATUSES)[number];

/** Test name → status, in the order the log first names each test (the order matters for prefix matches). */
export type StatusMap = Map<string, string>;

export const MARKERS = {
  applyFailed: ">>>>> Patch Apply Failed",
  applied: ">>>>> Applied Patch",
  resetFailed: ">>>>> Reset Failed",
  testsErrored: ">>>>> Tests Errored",
  testsTimedOut: ">>>>> Tests Timed Out",
  start: ">>>>> Start Test Output",
  end: ">>>>> End Test Output",
  exitCode: ">>>>> Test Exit Code",
} as const;

/** The shell variable the eval script keeps the test command's exit status in. */
export const EXIT_CODE_VARIABLE = "SWEBENCH_TEST_EXIT_CODE";

/** Where things go in the instance's container. */
export const CONTAINER_PATCH = "/tmp/patch.diff";
export const CONTAINER_EVAL_SCRIPT = "/eval.sh";
export const CONTAINER_WORKDIR = "/testbed";

/** Files of an instance's log folder. */
export const LOG_FILES = {
  report: "report.json",
  instanceLog: "run_instance.log",
  testOutput: "test_output.txt",
  evalScript: "eval.sh",
  patch: "patch.diff",
  /** The run's metadata, in `logs/run_evaluation/<run_id>/` (not an instance's folder). */
  runMetadata: "run.json",
  /** The folder of an instance's staged binary patch assets. */
  imageAssets: "image_assets",
} as const;

/** `logs/run_evaluation/<run_id>/<model>/<instance_id>/`, relative to the folder the run writes to. */
export const RUN_EVALUATION_DIR = ["logs", "run_evaluation"] as const;

/** How the harness grades: both lists must pass, or (fail_only) no listed test may fail. */
export type EvalType = "pass_and_fail" | "fail_only";

/** The harness's default test timeout (seconds). */
export const DEFAULT_EVAL_TIMEOUT = 1800;
