import { join, resolve } from "node:path";
import pc from "picocolors";
import { loadSwebench } from "../batch/load.js";
import { lockOutputDir } from "../batch/lock.js";
import { caseOf, newRunRecord, updateTotals } from "../batch/record.js";
import type { ConfigOverride } from "../config/load.js";
import { modelDisplayName } from "../config/model.js";
import type { SwerunConfig } from "../config/schema.js";
import { consolePrinter } from "../console/printer.js";
import { stdinIsTerminal } from "../console/prompt.js";
import type { Checkout } from "../datasets/checkout.js";
import type { Instance } from "../datasets/dataset.js";
import { datasetDirOf } from "../datasets/dataset-source.js";
import { DEFAULT_IMAGE_TEMPLATE } from "../datasets/image-name.js";
import { PredictionsFile } from "../datasets/predictions.js";
import { UserError } from "../errors.js";
import type { RunFacts } from "../facts/run-facts.js";
import { instancePreparer } from "../fixture-images/instance-preparer.js";
import { readRunRecord, runJsonPath, writeRunRecord } from "../formats/run-json.js";
import { openEventLog } from "../run/event-log.js";
import { checkOutputDir, checkOutputPath } from "../run/output.js";
import { runPreparedTask } from "../run/run.js";
import { printRunEnd, readEndFacts, runError, stopRunSwarm } from "../run/run-end.js";
import type { RunOptions, RunResult } from "../run/run-options.js";
import { endTiming } from "../run/timing.js";
import { checkLabel } from "../tracking/label.js";
import { asList } from "../util/as-list.js";
import { newRunId } from "../util/ids.js";
import { pathInside } from "../util/safe-path.js";
import { configOverrides, type FlagsOf } from "./options.js";

/** `swerun swebench-single` flags (commands/options.ts). */
export type SingleFlags = FlagsOf<"swebench-single">;

/** One SWE-bench instance, as `swerun swebench-single` runs it: each field is the command's flag of that name. */
export interface SingleRequest {
  /** `-c`: config files, built-in names or `key.path=value`, in order. */
  config: string[];
  /** Overrides applied after `config` (`--model`, `--environment-class`, `--exit-immediately`, ...). */
  overrides: ConfigOverride[];
  subset?: string;
  split?: string;
  /** `-i`: an instance id, or an index into the sorted ids. */
  instance?: string;
  /** `-o`: the output folder (default `runs/single/<id>`). */
  output?: string;
  /** `--repo-dir`: a clone of the repository, for the local environment's checkout. */
  repoDir?: string;
  /** `--keep`: keep the local checkout afterwards. */
  keep?: boolean;
  imageTemplate?: string;
  label?: string;
  /** `--yolo`: run without confirming each command. */
  yolo?: boolean;
  /** `--events`: the JSON lines event stream's file. */
  events?: string;
}

/** `swerun swebench-single`'s flags as a request (the flags below commands/ end here). */
export function singleRequest(flags: SingleFlags): SingleRequest {
  const { subset, split, instance, output, repoDir, keep, imageTemplate, label, yolo, events } = flags;
  return {
    ...{ subset, split, instance, output, repoDir, keep, imageTemplate, label, yolo, events },
    config: asList(flags.config),
    overrides: configOverrides("swebench-single", flags),
  };
}

/** `-i`: an instance id, or an index into the sorted ids. */
export function pickInstance(instances: Instance[], selector: string | undefined): Instance {
  if (selector === undefined) throw new UserError("give the instance with -i <instance id or index>");
  const byId = instances.find((instance) => instance.instance_id === selector);
  if (byId) return byId;
  if (/^-?\d+$/.test(selector)) {
    const sorted = [...instances].sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1));
    const index = Number(selector);
    const picked = sorted.at(index);
    if (picked) return picked;
    throw new UserError(`-i ${selector}: index out of range (the dataset has ${instances.length} instances)`);
  }
  throw new UserError(`-i ${selector}: no instance with that id`);
}

/** What a single instance runs with: its config (mode and scripted outputs set), folder and trajectory path. */
interface SingleSetup {
  subset: string;
  config: SwerunConfig;
  instance: Instance;
  outputDir: string;
  output: string;
}

/** Everything checked and loaded before the run: flags, config, dataset, the instance, the output paths. */
async function singleSetup(request: SingleRequest, tty: boolean): Promise<SingleSetup> {
  if (request.label !== undefined) checkLabel(String(request.label), "--label");
  if (request.output) checkOutputDir(resolve(request.output));
  const { subset, config, instances } = await loadSwebench(request, request.overrides);
  // Again now that the config's own credentials (model_kwargs.api_key, ...) are known.
  if (request.label !== undefined) checkLabel(String(request.label), "--label");
  const instance = pickInstance(instances, request.instance);
  const id = instance.instance_id;
  // Interactive on a terminal unless --yolo (a config's yolo mode asks here too); without one, yolo.
  config.agent.mode =
    request.yolo || !tty ? "yolo" : config.agent.mode === "yolo" ? "confirm" : config.agent.mode;
  const outputDir = resolve(request.output ?? pathInside(join("runs", "single"), id));
  const output = checkOutputPath(pathInside(outputDir, `${id}.traj.json`), "-o");
  if (config.model.model_class === "deterministic" && Array.isArray(instance.swerun_scripted_outputs)) {
    config.model.outputs = instance.swerun_scripted_outputs as Array<Record<string, unknown>>;
  }
  return { subset, config, instance, outputDir, output };
}

/**
 * `swerun swebench-single`: one instance, interactive by default, trajectory and a one-entry preds.json.
 * It takes the output folder's lock, as a batch does, so it never writes preds.json under a running batch.
 */
export async function swebenchSingleCommand(flags: SingleFlags): Promise<number> {
  return runSingle(singleRequest(flags));
}

async function runSingle(request: SingleRequest): Promise<number> {
  const tty = stdinIsTerminal();
  const setup = await singleSetup(request, tty);
  const { config, instance, outputDir, output } = setup;
  const id = instance.instance_id;
  const events = await openEventLog(request.events, [config.model]);
  const runId = newRunId();
  const stream = events?.stream({ swarmId: "main", executionId: runId }, { swarmName: id });
  const release = lockOutputDir(outputDir);
  stream?.start(instance.problem_statement);
  let checkout: Checkout | undefined;
  try {
    const options: RunOptions = {
      config,
      output,
      runId,
      instanceId: id,
      vars: { instance_id: id },
      startupVars: { ...instance },
      extras: { instance_id: id },
      interactive: tty,
      handleSignals: true,
      subscribers: [
        consolePrinter({ color: Boolean(process.stdout.isTTY) }),
        ...(stream ? [stream.listener] : []),
      ],
      onProgress: (line: string) => process.stderr.write(`${line}\n`),
      holdLastSave: true,
    };
    const startedAt = Date.now();
    const result = await runPreparedTask(
      instance.problem_statement,
      options,
      async () => {
        const source = { imageTemplate: request.imageTemplate, repoDir: request.repoDir };
        checkout = await instancePreparer(source, datasetDirOf(setup.subset))(config, instance);
      },
      (error) => error instanceof UserError,
    );
    await endTiming(startedAt, result.trajectory, result.completeTrajectory);
    const facts = await readEndFacts(result);
    stopRunSwarm(stream, result, facts);
    await writeSingleOutputs(setup, { request, result, facts, runId, checkout });
    if (result.error !== undefined) throw runError(result.error);
    return 0;
  } finally {
    if (checkout && !request.keep) checkout.remove();
    release();
    stream?.stop({ success: false }); // a run that threw: the swarm still ends
    events?.close();
  }
}

/** preds.json's one entry and run.json, then the lines that say where they are. */
async function writeSingleOutputs(
  setup: SingleSetup,
  run: {
    request: SingleRequest;
    result: RunResult;
    facts: RunFacts | undefined;
    runId: string;
    checkout: Checkout | undefined;
  },
): Promise<void> {
  const { config, instance, outputDir, output, subset } = setup;
  const { request, result, checkout } = run;
  const id = instance.instance_id;
  const preds = new PredictionsFile(join(outputDir, "preds.json"));
  preds.set({
    model_name_or_path: modelDisplayName(config.model),
    instance_id: id,
    model_patch: result.submission,
  });
  recordSingle(outputDir, output, { config, request, subset, id, result, runId: run.runId });
  await printRunEnd(result, run.facts);
  process.stdout.write(`${pc.bold("predictions:")} ${preds.path}\n`);
  if (checkout && request.keep) process.stdout.write(`${pc.bold("checkout kept:")} ${checkout.dir}\n`);
}

/**
 * run.json for a single instance, so `swerun runs` lists it (with `--label`). In a folder that already has a
 * run.json (a batch's), the instance's case is updated and the rest of the record kept.
 */
function recordSingle(
  outputDir: string,
  trajectory: string,
  run: {
    config: SwerunConfig;
    request: SingleRequest;
    subset: string;
    id: string;
    result: RunResult;
    /** The run's id (its containers' label, the events' execution_id). */
    runId: string;
  },
): void {
  const path = runJsonPath(outputDir);
  const previous = readRunRecord(path);
  const { config, request, subset, id, result } = run;
  const record = newRunRecord({
    runId: run.runId,
    label: request.label,
    modelName: modelDisplayName(config.model),
    config,
    imageTemplate: request.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE,
    instances: 1,
    dataset: {
      subset,
      split: request.split ?? "test",
      slice: null,
      filter: null,
      instance_ids: id,
      shuffle: false,
    },
    previous,
  });
  const kept = previous?.cases !== undefined && previous.agent !== undefined;
  if (kept) {
    Object.assign(record, previous, { label: record.label, swerun_version: record.swerun_version });
    record.cases = { ...previous.cases };
  }
  record.cases[id] = caseOf(trajectory, result.exit_status, result.cost);
  updateTotals(record, true);
  if (!kept) {
    record.status = "finished";
    record.ended_at = new Date().toISOString();
  }
  writeRunRecord(path, record);
}
