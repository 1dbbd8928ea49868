import { join } from "node:path";
import type Docker from "dockerode";
import type { Prediction } from "../datasets/predictions.js";
import { daemonMessage } from "../environments/docker/pull.js";
import type { GradeStatus } from "../formats/run-json.js";
import { pythonJson } from "../python/json-dumps-indent.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { namingFile } from "../util/file-error.js";
import { makeDirsSync } from "../util/make-dirs.js";
import { pathInside } from "../util/safe-path.js";
import { redact } from "../util/secrets.js";
import type { EvalInstance } from "./eval-instance.js";
import { applyPatch, type GradingPlace } from "./grading-apply.js";
import type { GradingContainer } from "./grading-container.js";
import { gradingFailure } from "./grading-errors.js";
import { openGradingContainer } from "./grading-start.js";
import { runTests, settleTests } from "./grading-tests.js";
import { LOG_FILES, RUN_EVALUATION_DIR } from "./harness-constants.js";
import { InstanceLog } from "./instance-log.js";
import { type LogParser, logParser, unsupportedParserMessage } from "./log-parsers/registry.js";
import { fileTestLog } from "./test-log.js";
import { evalReport, type InstanceReport } from "./verdict.js";

export interface GradeResult {
  instance_id: string;
  status: GradeStatus;
  resolved: boolean;
  /** Why the instance has no report (status `error`). */
  error?: string;
  /**
   * Set when the grading failed for a reason of the environment's or swerun's own, not the prediction's
   * (the container or the daemon failed, a log could not be written, the grading was interrupted), in the
   * harness's infra-failure words (`container_unavailable`, ...): no verdict, graded again next time, and an
   * earlier verdict stays.
   */
  infra_failure?: string;
  /** The instance's log folder (not made for an empty patch). */
  logDir: string;
  report?: InstanceReport;
  /** Wall time of the eval script itself, and of the whole grading. */
  testSeconds: number;
  totalSeconds: number;
}

export interface GradeOptions {
  /** The daemon the grading container starts on (unless `startContainer` starts it elsewhere). */
  docker?: Docker;
  /** Starts the grading's container elsewhere than `docker` (a pod); told when it is being created and created. */
  startContainer?: (hooks: StartHooks) => Promise<GradingContainer>;
  instance: EvalInstance;
  prediction: Prediction;
  runId: string;
  /** The run id the grading container is labelled with (default `runId`): a batch's own, as its agents' containers. */
  containerRunId?: string;
  /** The folder that holds `logs/run_evaluation/...` (the current directory, or `<run folder>/eval`). */
  outputDir: string;
  /** Seconds the eval script may run (the harness's default is 1800). */
  timeoutSeconds: number;
  /** Keep the container afterwards (its name is in run_instance.log). */
  keep?: boolean;
  /** Docker network mode of the container (default: the daemon's default network). */
  network?: string;
  pullTimeoutSeconds?: number;
  /** Aborting stops the instance: its exec is abandoned, its container removed, status `error`. */
  signal?: AbortSignal;
  /** Pull progress and the name of a kept container. */
  onProgress?: (line: string) => void;
  /**
   * A fresh container of the instance's image started for this grading ahead of time (`swebench --eval`
   * starts it while the agent works); when missing or it failed, the grading starts its own.
   */
  started?: Promise<GradingContainer>;
  /** The Docker host the grading runs on, named in run_instance.log (a batch on a pool of hosts). */
  hostName?: string;
  /** A task repo folder: binary patch assets are read from its `tasks/<id>/test_assets/` before their URL. */
  taskRepo?: string;
  /** The step the grading is at (`pulling`, `starting`, `applying patch`, `running tests`, `grading`). */
  onPhase?: (phase: string) => void;
}

/** A model name as the harness names its folders and run report after it: `/` as `__`. */
export function modelFolderName(model: string | undefined): string {
  // A model name holding a key never puts it into a path (the console prints paths redacted).
  return redact(model ?? "None").replaceAll("/", "__");
}

/** `logs/run_evaluation/<run_id>/<model with / as __>` under `outputDir`: the instances' log folders are in it. */
export function modelLogDir(outputDir: string, runId: string, model: string | undefined): string {
  return pathInside(outputDir, ...RUN_EVALUATION_DIR, runId, modelFolderName(model));
}

/** What starting a grading container tells its caller. */
export interface StartHooks {
  onCreating: () => void;
  onCreated: (container: GradingContainer) => void;
}

/** `logs/run_evaluation/<run_id>/<model with / as __>/<instance_id>` under `outputDir`. */
export function instanceLogDir(outputDir: string, runId: string, prediction: Prediction): string {
  return pathInside(modelLogDir(outputDir, runId, prediction.model_name_or_path), prediction.instance_id);
}

/**
 * Grades one prediction as the SWE-bench harness's `run_instance` does, in a fresh container of the
 * instance's image, phase by phase: the container (grading-start.ts), the patch written and applied (four
 * ways, then the reverse check) with the eval script (grading-apply.ts), `/eval.sh` run with a timeout
 * (grading-tests.ts), the test output parsed with the instance's log parser and graded, and report.json
 * written beside test_output.txt, run_instance.log, eval.sh and patch.diff. An empty patch is not run. A patch
 * that does not apply, a timeout or a failure leave no report.json (the harness's errors, grading-errors.ts).
 * The container is removed however it ends, unless `keep`.
 */
export async function gradeInstance(options: GradeOptions): Promise<GradeResult> {
  const { instance, prediction } = options;
  const started = Date.now();
  const logDir = instanceLogDir(options.outputDir, options.runId, prediction);
  const result = (status: GradeStatus, extra: Partial<GradeResult> = {}): GradeResult => ({
    instance_id: instance.instance_id,
    status,
    resolved: status === "resolved",
    logDir,
    testSeconds: 0,
    totalSeconds: (Date.now() - started) / 1000,
    ...extra,
  });
  if (!prediction.model_patch) return result("empty_patch");
  namingFile(logDir, () => makeDirsSync(logDir));
  const log = new InstanceLog(join(logDir, LOG_FILES.instanceLog));
  const parser = logParser(instance.log_parser);
  if (!parser) {
    const error = unsupportedParserMessage(instance.log_parser);
    log.error(`${instance.instance_id}: ${error}`);
    return result("error", { error });
  }
  const phase = options.onPhase ?? (() => {});
  if (options.hostName) log.info(`Grading ${instance.instance_id} on Docker host ${options.hostName}`);
  let grading: GradingContainer | undefined;
  let testSeconds = 0;
  try {
    grading = await openGradingContainer(options, log, phase, (created) => {
      grading = created;
    });
    const place = { container: grading.box, logDir, log };
    const diffBefore = await applyPatch(place, options, phase);
    const tests = await runTests(place, options, phase);
    testSeconds = tests.testSeconds;
    await settleTests(place, tests, options, diffBefore);
    phase("grading");
    const entry = writeReport(options, parser, place, tests.outputPath);
    return result(entry.resolved ? "resolved" : "unresolved", { report: entry, testSeconds });
  } catch (error) {
    return result("error", { ...gradingFailure(error, log, instance.instance_id, logDir), testSeconds });
  } finally {
    if (grading && !options.keep) await removeContainer(grading, log, instance.instance_id);
  }
}

/** The last phase: the instance graded from test_output.txt with its log parser, report.json written. */
function writeReport(
  options: GradeOptions,
  parser: LogParser,
  place: GradingPlace,
  outputPath: string,
): InstanceReport {
  const { instance, prediction } = options;
  const { log, logDir } = place;
  log.info(`Grading answer for ${instance.instance_id}...`);
  const report = {
    [instance.instance_id]: evalReport(instance, prediction.model_patch, fileTestLog(outputPath), parser),
  };
  const entry = report[instance.instance_id] as InstanceReport;
  log.info(
    `report: ${JSON.stringify(report)}\nResult for ${instance.instance_id}: resolved: ${entry.resolved}`,
  );
  writeFileAtomic(join(logDir, LOG_FILES.report), [redact(pythonJson(report, 4))]);
  return entry;
}

/** Removes the grading's container, said in run_instance.log (a failure too). */
async function removeContainer(
  grading: GradingContainer,
  log: InstanceLog,
  instanceId: string,
): Promise<void> {
  try {
    await grading.remove();
  } catch (error) {
    log.lineIfWritable("ERROR", `Removing the container of ${instanceId} failed: ${daemonMessage(error)}`);
    return;
  }
  log.lineIfWritable("INFO", `Container for ${instanceId} removed`);
}
