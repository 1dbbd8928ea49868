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
import { runReportName } from "../eval/harness-report.js";
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
  const settings = evalSettings(input, flags);
  const { source, runId } = settings;
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const predictions = new Map<string, Prediction>(
    readPredictions(source.predsPath).map((prediction, index) => {
      checkPredictionNames(prediction, `${source.predsPath}: prediction ${index}`, runId);
      return [prediction.instance_id, prediction];
    }),
  );
  if (predictions.size === 0) throw new UserError(`${source.predsPath}: no predictions`);
  const { instances, fixtures } = await gradedInstances(settings, flags, predictions, say);
  if (flags.regrade) checkRegradeLogs(source.outputDir, runId, instances, predictions);
  writeRunMetadata(source.outputDir, runId, {
    dataset: recordedDatasetName(settings.subset),
    split: settings.split,
    ...(settings.taskRepo ? { task_repo: settings.taskRepo } : {}),
  });
  const datasetDir = datasetDirOf(settings.subset);
  const docker = flags.regrade ? undefined : await connectDocker();
  const { display, stopping, signal, dispose } = gradingDisplay(flags, settings.workers, say);
  try {
    const summary = await runEvaluation({
      ...(docker ? { docker } : {}),
      instances,
      predictions,
      runId,
      outputDir: source.outputDir,
      workers: settings.workers,
      timeoutSeconds: settings.timeoutSeconds,
      redo: Boolean(flags.redo),
      ...(flags.regrade ? { regrade: true } : {}),
      ...(settings.taskRepo ? { taskRepo: settings.taskRepo } : {}),
      display,
      stopping,
      signal,
      ...(flags.keep ? { keep: true } : {}),
      ...(flags.network ? { network: flags.network } : {}),
      ...(source.runJson ? { runJson: source.runJson } : {}),
      prepare: (instance) => fixtureImageReady(instance, fixtures.get(instance.instance_id), datasetDir),
    });
    if (!flags.quiet) for (const line of summary.lines) process.stdout.write(`${line}\n`);
    process.stdout.write(`${pc.bold("resolved:")} ${resolvedSummary(summary.report)}\n`);
    process.stdout.write(`${pc.bold("report:")} ${summary.reportPath}\n`);
    process.stdout.write(`${pc.bold("logs:")} ${join(source.outputDir, "logs", "run_evaluation", runId)}\n`);
    return stopping() ? 130 : 0;
  } finally {
    dispose();
    if (docker) closeDockerClient(docker);
  }
}

/**
 * The progress display, and the two Ctrl-C stages: the first grades no new instance, the second (or
 * SIGTERM) aborts `signal`, which stops the running gradings.
 */
function gradingDisplay(flags: EvalFlags, workers: number, say: (line: string) => void) {
  const abort = new AbortController();
  let stopping = false;
  const tty = Boolean(process.stderr.isTTY) && !flags.quiet;
  const display = tty ? terminalEvalDisplay(process.stderr, workers) : plainEvalDisplay(say, flags.quiet);
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

function evalSettings(input: string, flags: EvalFlags): EvalSettings {
  const source = resolveEvalInput(input, flags.output);
  checkOutputDir(source.outputDir, flags.output ? "-o" : "eval folder");
  const workers = positiveNumber(flags.workers ?? 1, "--workers", true);
  const timeoutSeconds = positiveNumber(flags.timeout ?? DEFAULT_EVAL_TIMEOUT, "--timeout", false);
  const runId = flags.runId ?? source.defaultRunId;
  if (!/^[\w.-]+$/.test(runId) || nameProblem(runId, ID_MAX_BYTES))
    throw new UserError(
      `--run-id ${shownName(runId)}: use letters, digits, ".", "_" and "-" (not "." or "..", at most ${ID_MAX_BYTES} bytes)`,
    );
  if (redact(runId) !== runId)
    throw new UserError(
      `--run-id: the run id (${flags.runId ? "given" : "the run folder's name"}) holds a secret (an API key or credential swerun redacts); it would go into folder names: pass another --run-id`,
    );
  const recorded = readRunMetadata(source.outputDir, runId);
  const recordedDataset = typeof recorded?.dataset === "string" ? recorded.dataset : undefined;
  const recordedSplit = typeof recorded?.split === "string" ? recorded.split : undefined;
  if (flags.regrade && flags.redo) throw new UserError("--regrade and --redo: choose one");
  if (flags.regrade && !flags.subset && !recordedDataset && !source.subset)
    throw new UserError(
      `--regrade: evaluation run ${runId} did not record which dataset it used (no logs/run_evaluation/${runId}/run.json in ${source.outputDir}); pass --subset`,
    );
  const subset = flags.subset ?? (flags.regrade ? recordedDataset : undefined) ?? source.subset ?? "lite";
  const split = flags.split ?? (flags.regrade ? recordedSplit : undefined) ?? source.split ?? "test";
  const recordedRepo = typeof recorded?.task_repo === "string" ? recorded.task_repo : undefined;
  const taskRepo = flags.taskRepo ? resolve(flags.taskRepo) : flags.regrade ? recordedRepo : undefined;
  if (taskRepo && !existsSync(join(taskRepo, "tasks")))
    throw new UserError(
      flags.taskRepo
        ? `--task-repo ${flags.taskRepo}: not a task repo (no tasks/ folder)`
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
  flags: EvalFlags,
  predictions: Map<string, Prediction>,
  say: (line: string) => void,
): Promise<{ instances: EvalInstance[]; fixtures: Map<string, Instance> }> {
  const rows = taskRepo
    ? loadTaskRepo(taskRepo, split)
    : await loadInstances({
        subset: datasetSource(subset),
        split,
        ...(flags.quiet ? {} : { onProgress: say }),
      });
  const known = new Set(rows.map((row) => row.instance_id));
  const unknown = [...predictions.keys()].filter((id) => !known.has(id));
  if (unknown.length > 0)
    throw new UserError(
      `${source.predsPath}: predictions for instances not in ${subset}: ${unknown.slice(0, 10).join(", ")}${unknown.length > 10 ? ", ..." : ""}`,
    );
  const selected = selectInstances(rows, {
    ...(flags.filter ? { filter: flags.filter } : {}),
    ...(flags.instanceIds ? { instanceIds: flags.instanceIds } : {}),
  });
  const graded = selected.filter((row) => predictions.get(row.instance_id)?.model_patch);
  const specs = new Map(
    evalInstances(graded, subset, flags.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE).map((spec) => [
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
