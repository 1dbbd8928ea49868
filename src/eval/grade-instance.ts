import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import type { Prediction } from "../datasets/predictions.js";
import { daemonMessage } from "../environments/docker/pull.js";
import type { GradeStatus } from "../formats/run-json.js";
import { pythonJson } from "../python/json-dumps-indent.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { chaosPoint } from "../util/chaos.js";
import { pathInside } from "../util/safe-path.js";
import { redact } from "../util/secrets.js";
import { writeTar } from "../util/tar.js";
import { decodeOutput, type ExecResult } from "./container-exec.js";
import type { EvalInstance } from "./eval-instance.js";
import { EvalOutputSplitter } from "./eval-output-split.js";
import { makeEvalScript, testsExecArgv } from "./eval-script.js";
import { type GradingBox, type GradingContainer, startGradingContainer } from "./grading-container.js";
import {
  CONTAINER_EVAL_SCRIPT,
  CONTAINER_PATCH,
  CONTAINER_WORKDIR,
  LOG_FILES,
  MARKERS,
  RUN_EVALUATION_DIR,
} from "./harness-constants.js";
import { injectAssetRestore, restoreCommand, stagedLine, stageImageAssets } from "./image-assets.js";
import { classifyText } from "./infra-failure.js";
import { InstanceLog } from "./instance-log.js";
import { logParser, unsupportedParserMessage } from "./log-parsers/registry.js";
import { applyScript, newToken, parseApplyOutput } from "./patch-apply.js";
import { fileTestLog, TestLogWriter } from "./test-log.js";
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

/** A grading that ended as the harness's gradings end without a report (the patch did not apply, a timeout). */
class GradingError extends Error {}

/** A grading that could not be done (its container or the daemon failed, or it was interrupted). */
class InfraFailure extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The infra-failure reason of an unexpected error: the harness's words for the daemon's, else swerun's own. */
function infraReason(error: unknown, message: string): string {
  if (error instanceof InfraFailure) return error.reason;
  const { code, syscall } = error as NodeJS.ErrnoException;
  const network =
    ["connect", "read", "write"].includes(syscall ?? "") && /^E(CONN|PIPE|TIMEDOUT)/.test(code ?? "");
  // A file system call that failed: a log of swerun's could not be written.
  if (syscall && !network) return "output_unwritable";
  return classifyText(message)?.reason ?? "container_unavailable";
}

/**
 * The grading's fresh container: `options.startContainer`'s (a pod), else one started on `options.docker`.
 * `onCreated` is told it as soon as it exists, so a failed start still removes it.
 */
function startContainer(
  options: GradeOptions,
  log: InstanceLog,
  phase: (phase: string) => void,
  onCreated: (created: GradingContainer) => void,
): Promise<GradingContainer> {
  const { instance } = options;
  const creating = () => {
    phase("starting");
    log.info(`Creating container for ${instance.instance_id}...`);
  };
  const created = (container: GradingContainer) => {
    onCreated(container);
    log.info(`Container for ${instance.instance_id} created: ${container.box.id}`);
  };
  if (options.startContainer) return options.startContainer({ onCreating: creating, onCreated: created });
  if (!options.docker)
    throw new Error("gradeInstance: neither a Docker client nor a way to start a container");
  return startGradingContainer({
    docker: options.docker,
    instance,
    runId: options.containerRunId ?? options.runId,
    ...(options.keep ? { keep: true } : {}),
    ...(options.network ? { network: options.network } : {}),
    ...(options.pullTimeoutSeconds ? { pullTimeoutSeconds: options.pullTimeoutSeconds } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    onCreating: creating,
    onCreated: created,
  });
}

/** Writes `$1` to the patch file and `$2` to the eval script, byte for byte, before the patch steps. */
const WRITE_FILES = `(umask 022 && printf '%s' "$1" > ${CONTAINER_PATCH} && printf '%s' "$2" > ${CONTAINER_EVAL_SCRIPT} && chmod 644 ${CONTAINER_PATCH} ${CONTAINER_EVAL_SCRIPT}) || exit 97`;

/** Whether a file can be an exec argument: no NUL, well under Linux's 128 KiB limit for one argument. */
function fitsInArguments(text: string): boolean {
  return !text.includes("\0") && Buffer.byteLength(text) <= 96 * 1024;
}

/**
 * Runs the eval script (and the diff after it) in the container, its output going to test_output.txt's temp
 * file as it arrives (never held whole): the caller commits or aborts `testLog`. A log that cannot be
 * written (a full disk) fails once the exec is over, its temp file removed.
 */
async function runTests(
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

/**
 * Grades one prediction as the SWE-bench harness's `run_instance` does, in a fresh container of the
 * instance's image: write and apply the patch (four ways, then the reverse check), run `/eval.sh` with a
 * timeout, parse the test output with the instance's log parser, grade, and write report.json,
 * test_output.txt, run_instance.log, eval.sh and patch.diff. An empty patch is not run. A patch that does
 * not apply, a timeout or a failure leave no report.json (the harness's errors). The container is removed
 * however it ends, unless `keep`.
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
  mkdirSync(logDir, { recursive: true });
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
    grading = options.started ? await options.started.catch(() => undefined) : undefined;
    if (grading) {
      log.info(`Creating container for ${instance.instance_id}...`);
      log.info(`Container for ${instance.instance_id} created: ${grading.box.id}`);
    } else {
      phase("pulling");
      grading = await startContainer(options, log, phase, (created) => {
        grading = created;
      });
    }
    const { box: container, name } = grading;
    log.info(`Container for ${instance.instance_id} started: ${container.id}`);
    if (options.keep)
      options.onProgress?.(`${instance.instance_id}: container kept: docker exec -it ${name} bash`);

    const patch = prediction.model_patch;
    let evalScript = makeEvalScript(instance.eval_script);
    writeFileSync(join(logDir, LOG_FILES.patch), redact(patch));
    log.info(
      `Intermediate patch for ${instance.instance_id} written to ${join(logDir, LOG_FILES.patch)}, now applying to container...`,
    );
    // Small files travel as arguments of the patch exec, which writes them first (one daemon call fewer
    // before the patch is applied); others are uploaded as an archive. Either way the same bytes, mode 644.
    const inline = fitsInArguments(patch) && fitsInArguments(evalScript);
    if (!inline)
      await container.putArchive(
        writeTar([
          { type: "file", path: CONTAINER_PATCH.slice(1), mode: 0o644, content: Buffer.from(patch) },
          {
            type: "file",
            path: CONTAINER_EVAL_SCRIPT.slice(1),
            mode: 0o644,
            content: Buffer.from(evalScript),
          },
        ]),
      );

    phase("applying patch");
    const token = newToken();
    const applyCommand = inline
      ? ["/bin/bash", "-c", `${WRITE_FILES}\n${applyScript(token)}`, "bash", patch, evalScript]
      : ["/bin/bash", "-c", applyScript(token)];
    const applyRun = await container.exec(applyCommand, {
      workdir: CONTAINER_WORKDIR,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (applyRun.aborted) throw new InfraFailure("interrupted", "interrupted");
    const applied = parseApplyOutput(decodeOutput(applyRun.output), token);
    for (const attempt of applied.attempts) {
      if (attempt.exitCode === 0) log.info(`${MARKERS.applied}:\n${attempt.output}`);
      else log.info(`Failed to apply patch to container: ${attempt.command}`);
    }
    if (applied.reverseCheck?.exitCode === 0) log.info(`${MARKERS.applied}: verified already applied`);
    if (!applied.applied) {
      const last = applied.attempts.at(-1)?.output ?? decodeOutput(applyRun.output);
      log.info(`${MARKERS.applyFailed}:\n${last}`);
      throw new GradingError(`${MARKERS.applyFailed}:\n${last}`);
    }
    log.info(`Git diff before:\n${applied.diffBefore}`);
    // Binary patch assets arrive after the patch, as the harness stages them: copied to /image_assets and
    // put in place by lines the eval script runs just before its tests (with the script sent again).
    const staged = await stageImageAssets({
      instanceId: instance.instance_id,
      assets: instance.image_assets ?? [],
      logDir,
      ...(options.taskRepo ? { taskRepo: options.taskRepo } : {}),
      warn: (message) => log.warning(message),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (staged.length > 0) {
      evalScript = injectAssetRestore(
        evalScript,
        staged.map((asset) => restoreCommand(asset.path)),
      );
      await container.putArchive(
        writeTar([
          { type: "dir", path: "image_assets", mode: 0o755 },
          ...staged.map((asset) => ({
            type: "file" as const,
            path: `image_assets/${asset.flat}`,
            mode: 0o644,
            content: asset.data,
          })),
          {
            type: "file",
            path: CONTAINER_EVAL_SCRIPT.slice(1),
            mode: 0o644,
            content: Buffer.from(evalScript),
          },
        ]),
      );
      log.info(stagedLine(staged));
    }
    writeFileSync(join(logDir, LOG_FILES.evalScript), redact(evalScript));
    log.info(
      `Eval script for ${instance.instance_id} written to ${join(logDir, LOG_FILES.evalScript)}; copied to the container`,
    );

    phase("running tests");
    chaosPoint("grading-tests");
    const testStarted = Date.now();
    const diffToken = newToken();
    const outputPath = join(logDir, LOG_FILES.testOutput);
    const { run, diff, testLog } = await runTests(container, outputPath, diffToken, options);
    testSeconds = (Date.now() - testStarted) / 1000;
    if (run.aborted) {
      testLog.abort();
      throw new InfraFailure("interrupted", "interrupted");
    }
    log.info(`Test runtime: ${testSeconds.toFixed(2)} seconds`);
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
    log.info(`Test output for ${instance.instance_id} written to ${outputPath}`);
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
    if (diffAfter !== applied.diffBefore) log.info("Git diff changed after running eval script");

    phase("grading");
    log.info(`Grading answer for ${instance.instance_id}...`);
    const report = {
      [instance.instance_id]: evalReport(instance, patch, fileTestLog(outputPath), parser),
    };
    const entry = report[instance.instance_id] as InstanceReport;
    log.info(
      `report: ${JSON.stringify(report)}\nResult for ${instance.instance_id}: resolved: ${entry.resolved}`,
    );
    writeFileAtomic(join(logDir, LOG_FILES.report), [redact(pythonJson(report, 4))]);
    return result(entry.resolved ? "resolved" : "unresolved", { report: entry, testSeconds });
  } catch (error) {
    const message =
      error instanceof GradingError || error instanceof InfraFailure
        ? error.message
        : `${error instanceof Error ? error.constructor.name : "Error"}: ${daemonMessage(error)}`;
    log.error(`Error in evaluating ${instance.instance_id}: ${message}`);
    const first = message.split("\n")[0] ?? message;
    if (error instanceof GradingError) {
      // The harness's errors leave no report.json: one from an earlier grading goes too.
      rmSync(join(logDir, LOG_FILES.report), { force: true });
      return result("error", { error: first, testSeconds });
    }
    const reason = infraReason(error, message);
    const why = first === reason ? first : `${reason}: ${first}`;
    return result("error", { error: why, infra_failure: reason, testSeconds });
  } finally {
    if (grading && !options.keep) {
      try {
        await grading.remove();
        log.info(`Container for ${instance.instance_id} removed`);
      } catch (error) {
        log.error(`Removing the container of ${instance.instance_id} failed: ${daemonMessage(error)}`);
      }
    }
  }
}
