import { existsSync, statSync } from "node:fs";
import { basename, extname, join, resolve } from "node:path";
import pc from "picocolors";
import { checkInstanceId, type Instance, loadInstances } from "../datasets/dataset.js";
import { datasetDirOf, datasetSource, recordedDatasetName } from "../datasets/dataset-source.js";
import { DEFAULT_IMAGE_TEMPLATE } from "../datasets/image-name.js";
import { type Prediction, readPredictions } from "../datasets/predictions.js";
import { selectInstances } from "../datasets/select.js";
import { loadTaskRepo } from "../datasets/task-repo.js";
import { closeDockerClient, connectDocker } from "../environments/docker/client.js";
import { UserError } from "../errors.js";
import { recordedEvalRunId } from "../eval/earlier-gradings.js";
import { type EvalInstance, evalInstances } from "../eval/eval-instance.js";
import { runEvaluation } from "../eval/evaluate.js";
import { modelFolderName } from "../eval/grade-instance.js";
import { plainEvalDisplay, terminalEvalDisplay } from "../eval/grading-display.js";
import { fixtureImageReady, resolvedSummary } from "../eval/grading-driver.js";
import { DEFAULT_EVAL_TIMEOUT } from "../eval/harness-constants.js";
import { type RunReport, runReportName } from "../eval/harness-report.js";
import { checkRegradeLogs } from "../eval/regrade.js";
import { readRunMetadata, writeRunMetadata } from "../eval/run-metadata.js";
import { readableRunJson, runJsonPath } from "../formats/run-json.js";
import { checkOutputDir } from "../run/output.js";
import { onInterruptSignals } from "../run/signals.js";
import { ID_MAX_BYTES, NAME_MAX_BYTES, nameProblem, shownName } from "../util/safe-path.js";
import { redact } from "../util/secrets.js";
import type { FlagsOf } from "./options.js";

/** `swerun eval` flags (commands/options.ts). */
export type EvalFlags = FlagsOf<"eval">;

/**
 * Predictions to grade, as `swerun eval` grades them: `input` is a run folder (its preds.json; logs go to
 * `<folder>/eval`) or a predictions file (.json or .jsonl); the other fields are the command's flags of that name.
 */
export interface EvalRequest {
  input: string;
  /** `--subset`: the dataset (default: the run's, else Lite). */
  subset?: string;
  split?: string;
  /** `--instance-ids`: only these instances (comma-separated). */
  instanceIds?: string;
  /** `--filter`: only instances whose id matches this regular expression. */
  filter?: string;
  /** `-w`: gradings at once (default 1). */
  workers?: number;
  /** `--run-id`: names the logs' folder and the run report (default: the run folder's name). */
  runId?: string;
  /** `--timeout`: seconds an instance's tests may take. */
  timeout?: number;
  /** `-o`: where the logs and the run report go. */
  output?: string;
  /** `--redo`: grade instances graded before again. */
  redo?: boolean;
  /** `--regrade`: grade again from the logs of an earlier grading, without containers. */
  regrade?: boolean;
  /** `--task-repo`: a task repo whose tasks are the dataset. */
  taskRepo?: string;
  /** `--keep`: keep the grading containers. */
  keep?: boolean;
  /** `--network`: the grading containers' Docker network (e.g. none). */
  network?: string;
  imageTemplate?: string;
  /** `-q`: only the final summary. */
  quiet?: boolean;
}

/** `swerun eval`'s input and flags as a request, the numbers checked (the flags below commands/ end here). */
export function evalRequest(input: string, flags: EvalFlags): EvalRequest {
  const { subset, split, instanceIds, filter, runId, output, redo, regrade, taskRepo, keep, network } = flags;
  return {
    ...{ input, subset, split, instanceIds, filter, runId, output, redo, regrade, taskRepo, keep, network },
    ...{ imageTemplate: flags.imageTemplate, quiet: flags.quiet },
    ...(flags.workers !== undefined ? { workers: positiveNumber(flags.workers, "--workers", true) } : {}),
    ...(flags.timeout !== undefined ? { timeout: positiveNumber(flags.timeout, "--timeout", false) } : {}),
  };
}

/** What a grading ended with: the run report, its lines, where it and the logs are, whether Ctrl-C stopped it. */
export interface EvalResult {
  /** The harness's run report (`<model>.<run id>.json`). */
  report: RunReport;
  reportPath: string;
  /** The report's summary lines, as the harness prints them. */
  lines: string[];
  /** The per-instance logs' folder (`logs/run_evaluation/<run id>`). */
  logs: string;
  interrupted: boolean;
}

/** What `swerun eval <input>` grades: a run folder (its preds.json, logs in `<folder>/eval`) or a predictions file. */
export interface EvalInput {
  predsPath: string;
  outputDir: string;
  defaultRunId: string;
  runJson?: string;
  subset?: string;
  split?: string;
}

export function resolveEvalInput(input: string, output?: string): EvalInput {
  const path = resolve(input);
  if (!existsSync(path)) throw new UserError(`${input}: no such run folder or predictions file`);
  if (statSync(path).isDirectory()) {
    const predsPath = join(path, "preds.json");
    if (!existsSync(predsPath)) throw new UserError(`${input}: a run folder needs a preds.json (none found)`);
    const runJson = runJsonPath(path);
    const record = readableRunJson(runJson);
    const subset = typeof record?.subset === "string" ? record.subset : undefined;
    const split = typeof record?.split === "string" ? record.split : undefined;
    return {
      predsPath,
      outputDir: resolve(output ?? join(path, "eval")),
      // The run id its gradings were logged under (a renamed folder keeps it), else the folder's name.
      defaultRunId: recordedEvalRunId(runJson) ?? basename(path),
      ...(record ? { runJson } : {}),
      ...(subset ? { subset } : {}),
      ...(split ? { split } : {}),
    };
  }
  if (![".json", ".jsonl"].includes(extname(path).toLowerCase()))
    throw new UserError(`${input}: expected a run folder, or a predictions file (.json or .jsonl)`);
  return { predsPath: path, outputDir: resolve(output ?? "."), defaultRunId: basename(path, extname(path)) };
}

function positiveNumber(value: unknown, flag: string, whole: boolean): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0 || (whole && !Number.isInteger(number)))
    throw new UserError(`${flag}: expected a ${whole ? "whole " : ""}number > 0, got ${String(value)}`);
  return number;
}

/**
 * `swerun eval`: grades predictions in the instances' images as the SWE-bench harness does, writing its
 * per-instance logs and run report. Returns the exit code (130 when interrupted).
 */
export async function evalCommand(input: string, flags: EvalFlags): Promise<number> {
  const result = await evaluatePredictions(evalRequest(input, flags));
  if (!flags.quiet) for (const line of result.lines) process.stdout.write(`${line}\n`);
  process.stdout.write(`${pc.bold("resolved:")} ${resolvedSummary(result.report)}\n`);
  process.stdout.write(`${pc.bold("report:")} ${result.reportPath}\n`);
  process.stdout.write(`${pc.bold("logs:")} ${result.logs}\n`);
  return result.interrupted ? 130 : 0;
}

/**
 * Grades predictions as `swerun eval` does (each instance in its image's container, on the Docker daemon of
 * DOCKER_HOST; progress on standard error, Ctrl-C as the command's) and returns the run report.
 */
export async function evaluatePredictions(request: EvalRequest): Promise<EvalResult> {
  const settings = evalSettings(request);
  const { source, runId } = settings;
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const predictions = new Map<string, Prediction>(
    readPredictions(source.predsPath).map((prediction, index) => {
      checkPredictionNames(prediction, `${source.predsPath}: prediction ${index}`, runId);
      return [prediction.instance_id, prediction];
    }),
  );
  if (predictions.size === 0) throw new UserError(`${source.predsPath}: no predictions`);
  const { instances, fixtures } = await gradedInstances(settings, request, predictions, say);
  if (request.regrade) checkRegradeLogs(source.outputDir, runId, instances, predictions);
  writeRunMetadata(source.outputDir, runId, {
    dataset: recordedDatasetName(settings.subset),
    split: settings.split,
    ...(settings.taskRepo ? { task_repo: settings.taskRepo } : {}),
  });
  const datasetDir = datasetDirOf(settings.subset);
  const docker = request.regrade ? undefined : await connectDocker();
  const { display, stopping, signal, dispose } = gradingDisplay(request.quiet, settings.workers, say);
  try {
    const summary = await runEvaluation({
      ...(docker ? { docker } : {}),
      instances,
      predictions,
      runId,
      outputDir: source.outputDir,
      workers: settings.workers,
      timeoutSeconds: settings.timeoutSeconds,
      redo: Boolean(request.redo),
      ...(request.regrade ? { regrade: true } : {}),
      ...(settings.taskRepo ? { taskRepo: settings.taskRepo } : {}),
      display,
      stopping,
      signal,
      ...(request.keep ? { keep: true } : {}),
      ...(request.network ? { network: request.network } : {}),
      ...(source.runJson ? { runJson: source.runJson } : {}),
      prepare: (instance) => fixtureImageReady(instance, fixtures.get(instance.instance_id), datasetDir),
    });
    const { report, reportPath, lines } = summary;
    const logs = join(source.outputDir, "logs", "run_evaluation", runId);
    return { report, reportPath, lines, logs, interrupted: stopping() };
  } finally {
    dispose();
    if (docker) closeDockerClient(docker);
  }
}

/**
 * The progress display, and the two Ctrl-C stages: the first grades no new instance, the second (or
 * SIGTERM) aborts `signal`, which stops the running gradings.
 */
function gradingDisplay(quiet: boolean | undefined, workers: number, say: (line: string) => void) {
  const abort = new AbortController();
  let stopping = false;
  const tty = Boolean(process.stderr.isTTY) && !quiet;
  const display = tty ? terminalEvalDisplay(process.stderr, workers) : plainEvalDisplay(say, quiet);
  const signals = onInterruptSignals({
    interrupt: () => {
      stopping = true;
      display.message(
        "Ctrl-C: no new instances will be graded; running ones finish. Press Ctrl-C again to stop them.",
      );
    },
    stop: () => {
      stopping = true;
      display.message("Stopping the running gradings (their containers are removed)...");
      abort.abort();
    },
  });
  return { display, stopping: () => stopping, signal: abort.signal, dispose: signals.dispose };
}

/** What the flags and the input settle before anything is read: checked, with the one-line errors. */
interface EvalSettings {
  source: EvalInput;
  workers: number;
  timeoutSeconds: number;
  runId: string;
  subset: string;
  split: string;
  /** A task repo's tasks are the dataset; a re-grade uses the one its run recorded. */
  taskRepo: string | undefined;
}

function evalSettings(request: EvalRequest): EvalSettings {
  const source = resolveEvalInput(request.input, request.output);
  checkOutputDir(source.outputDir, request.output ? "-o" : "eval folder");
  const workers = positiveNumber(request.workers ?? 1, "--workers", true);
  const timeoutSeconds = positiveNumber(request.timeout ?? DEFAULT_EVAL_TIMEOUT, "--timeout", false);
  const runId = request.runId ?? source.defaultRunId;
  if (!/^[\w.-]+$/.test(runId) || nameProblem(runId, ID_MAX_BYTES))
    throw new UserError(
      `--run-id ${shownName(runId)}: use letters, digits, ".", "_" and "-" (not "." or "..", at most ${ID_MAX_BYTES} bytes)`,
    );
  if (redact(runId) !== runId)
    throw new UserError(
      `--run-id: the run id (${request.runId ? "given" : "the run folder's name"}) holds a secret (an API key or credential swerun redacts); it would go into folder names: pass another --run-id`,
    );
  const recorded = readRunMetadata(source.outputDir, runId);
  const recordedDataset = typeof recorded?.dataset === "string" ? recorded.dataset : undefined;
  const recordedSplit = typeof recorded?.split === "string" ? recorded.split : undefined;
  if (request.regrade && request.redo) throw new UserError("--regrade and --redo: choose one");
  if (request.regrade && !request.subset && !recordedDataset && !source.subset)
    throw new UserError(
      `--regrade: evaluation run ${runId} did not record which dataset it used (no logs/run_evaluation/${runId}/run.json in ${source.outputDir}); pass --subset`,
    );
  const subset = request.subset ?? (request.regrade ? recordedDataset : undefined) ?? source.subset ?? "lite";
  const split = request.split ?? (request.regrade ? recordedSplit : undefined) ?? source.split ?? "test";
  const recordedRepo = typeof recorded?.task_repo === "string" ? recorded.task_repo : undefined;
  const taskRepo = request.taskRepo ? resolve(request.taskRepo) : request.regrade ? recordedRepo : undefined;
  if (taskRepo && !existsSync(join(taskRepo, "tasks")))
    throw new UserError(
      request.taskRepo
        ? `--task-repo ${request.taskRepo}: not a task repo (no tasks/ folder)`
        : `--regrade: the task repo ${taskRepo} that logs/run_evaluation/${runId}/run.json records is not a task repo (no tasks/ folder); pass --task-repo`,
    );
  return { source, workers, timeoutSeconds, runId, subset, split, taskRepo };
}

/**
 * Refuses a prediction whose instance id or model name cannot name the folders and the run report the
 * grading writes (`logs/run_evaluation/<run id>/<model>/<id>/`, `<model>.<run id>.json`), naming it.
 */
function checkPredictionNames(prediction: Prediction, record: string, runId: string): void {
  checkInstanceId(prediction.instance_id, record);
  const model = modelFolderName(prediction.model_name_or_path);
  // The run report's temp file adds `.` and `.<pid>.<n>.tmp` (24 bytes at most) to its name.
  const problem =
    nameProblem(model, ID_MAX_BYTES) ??
    nameProblem(runReportName(prediction.model_name_or_path, runId), NAME_MAX_BYTES - 24);
  if (problem)
    throw new UserError(
      `${record} (${prediction.instance_id}): model_name_or_path ${shownName(prediction.model_name_or_path)} cannot name a folder or file (${problem})`,
    );
}

/**
 * The dataset's instances after --instance-ids / --filter, as grading specs (an instance with no patch gets
 * an empty one: it is counted, not graded), and the bundled ones' rows (their images are built here).
 */
async function gradedInstances(
  { source, subset, split, taskRepo }: EvalSettings,
  request: EvalRequest,
  predictions: Map<string, Prediction>,
  say: (line: string) => void,
): Promise<{ instances: EvalInstance[]; fixtures: Map<string, Instance> }> {
  const rows = taskRepo
    ? loadTaskRepo(taskRepo, split)
    : await loadInstances({
        subset: datasetSource(subset),
        split,
        ...(request.quiet ? {} : { onProgress: say }),
      });
  const known = new Set(rows.map((row) => row.instance_id));
  const unknown = [...predictions.keys()].filter((id) => !known.has(id));
  if (unknown.length > 0)
    throw new UserError(
      `${source.predsPath}: predictions for instances not in ${subset}: ${unknown.slice(0, 10).join(", ")}${unknown.length > 10 ? ", ..." : ""}`,
    );
  const selected = selectInstances(rows, {
    ...(request.filter ? { filter: request.filter } : {}),
    ...(request.instanceIds ? { instanceIds: request.instanceIds } : {}),
  });
  const graded = selected.filter((row) => predictions.get(row.instance_id)?.model_patch);
  const specs = new Map(
    evalInstances(graded, subset, request.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE).map((spec) => [
      spec.instance_id,
      spec,
    ]),
  );
  const instances: EvalInstance[] = selected.map(
    (row) =>
      specs.get(row.instance_id) ?? {
        instance_id: row.instance_id,
        image: typeof row.image === "string" ? row.image : "",
        eval_script: "",
        log_parser: "",
        FAIL_TO_PASS: [],
        PASS_TO_PASS: [],
        eval_type: "pass_and_fail",
      },
  );
  const fixtures = new Map(selected.filter((row) => row.fixture).map((row) => [row.instance_id, row]));
  return { instances, fixtures };
}
