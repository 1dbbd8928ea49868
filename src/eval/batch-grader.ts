import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import type { Instance } from "../swebench/dataset.js";
import { readPredictions } from "../swebench/predictions.js";
import type { EvalInstance } from "./eval-instance.js";
import { type GradeResult, gradeInstance } from "./grade-instance.js";
import { type GradingContainer, startGradingContainer } from "./grading-container.js";
import { limiter } from "./pool.js";
import { verdictLine } from "./progress.js";
import { recordEvalInRunJson } from "./run-json.js";
import { type RunReport, writeRunReport } from "./run-report.js";

export interface BatchGraderOptions {
  docker: Docker;
  /** Grading specs of the batch's instances, and their dataset rows (for bundled fixtures). */
  instances: EvalInstance[];
  rows: Instance[];
  datasetDir?: string;
  /** The batch's output folder: logs go to `<folder>/eval`, verdicts into `<folder>/run.json`. */
  folder: string;
  runId: string;
  modelName: string;
  /** Gradings at once (the batch's workers). */
  workers: number;
  timeoutSeconds: number;
  network?: string;
  /** Told each verdict as a line, with the resolve rate so far. */
  say: (line: string) => void;
}

/**
 * `swebench --eval`: grades each instance as soon as the batch finishes it, in a fresh container, while the
 * batch's workers go on (at most `workers` gradings at once); `finish` waits for the last one and writes
 * the run report.
 */
export function batchGrader(options: BatchGraderOptions) {
  const specs = new Map(options.instances.map((spec) => [spec.instance_id, spec]));
  const rows = new Map(options.rows.map((row) => [row.instance_id, row]));
  const predictions = new Map<
    string,
    { model_name_or_path: string; instance_id: string; model_patch: string }
  >();
  const outputDir = join(options.folder, "eval");
  const runJson = join(options.folder, "run.json");
  const limit = limiter(Math.max(1, options.workers));
  const abort = new AbortController();
  const pending: Array<Promise<void>> = [];
  let done = 0;
  let resolved = 0;

  /** Grading containers started while their instance's agent works, by instance id (each used once). */
  const started = new Map<string, Promise<GradingContainer>>();
  /** Gradings begun when the agent submitted, before its environment was closed, by instance id. */
  const early = new Map<string, { submission: string; result: Promise<GradeResult | undefined> }>();

  const imageReady = async (instance: EvalInstance) => {
    const row = rows.get(instance.instance_id);
    if (row?.fixture && options.datasetDir) {
      const { ensureFixtureImage } = await import("../images/fixture-image.js");
      await ensureFixtureImage(instance.image, row, options.datasetDir);
    }
  };

  const release = async (container: Promise<GradingContainer> | undefined) =>
    container?.then(
      (grading) => grading.remove().catch(() => {}),
      () => {},
    );
  const discard = (instanceId: string) => {
    const container = started.get(instanceId);
    started.delete(instanceId);
    return release(container);
  };

  const grade = async (
    instanceId: string,
    container: Promise<GradingContainer> | undefined,
  ): Promise<GradeResult | undefined> => {
    const instance = specs.get(instanceId);
    const prediction = predictions.get(instanceId);
    if (!instance || !prediction) {
      await release(container);
      return undefined;
    }
    try {
      await imageReady(instance);
    } catch (error) {
      await release(container);
      throw error;
    }
    return gradeInstance({
      docker: options.docker,
      instance,
      prediction,
      runId: options.runId,
      outputDir,
      timeoutSeconds: options.timeoutSeconds,
      signal: abort.signal,
      ...(container ? { started: container } : {}),
      ...(options.network ? { network: options.network } : {}),
    });
  };

  const prediction = (instanceId: string, submission: string) =>
    predictions.set(instanceId, {
      model_name_or_path: options.modelName,
      instance_id: instanceId,
      model_patch: submission,
    });

  /** The grading of a submission: the one begun early for it, or a new one (after any early one ended). */
  const gradingOf = (instanceId: string, submission: string): Promise<GradeResult | undefined> => {
    const begun = early.get(instanceId);
    early.delete(instanceId);
    if (begun?.submission === submission) return begun.result;
    const container = started.get(instanceId);
    started.delete(instanceId);
    const after = begun
      ? begun.result.then(
          () => {},
          () => {},
        )
      : Promise.resolve();
    return after.then(() => limit(() => grade(instanceId, container)));
  };

  /** Instances whose agent has submitted or ended: no grading container is started for them any more. */
  const ended = new Set<string>();
  let finishing = false;

  const prepare = (instanceId: string): void => {
    const instance = specs.get(instanceId);
    if (!instance || started.has(instanceId) || ended.has(instanceId)) return;
    if (finishing || abort.signal.aborted) return;
    const container = imageReady(instance).then(() =>
      startGradingContainer({
        docker: options.docker,
        instance,
        runId: options.runId,
        ...(options.network ? { network: options.network } : {}),
      }),
    );
    container.catch(() => {});
    started.set(instanceId, container);
  };

  return {
    /**
     * Starts the instance's grading container as its agent's environment starts, when the image is already
     * on the daemon (the two container starts overlap; an image still to pull or build waits for `prepare`).
     */
    prepareEarly(instanceId: string): void {
      const instance = specs.get(instanceId);
      if (!instance || started.has(instanceId)) return;
      options.docker
        .getImage(instance.image)
        .inspect()
        .then(
          () => prepare(instanceId),
          () => {},
        );
    },
    /**
     * Begins grading a submission as soon as the agent submits (the grading overlaps the removal of the
     * agent's container and the saving of its trajectory); its verdict is told and recorded by `submit`.
     */
    submitted(instanceId: string, submission: string): void {
      ended.add(instanceId);
      if (!submission || early.has(instanceId) || abort.signal.aborted || !specs.has(instanceId)) return;
      prediction(instanceId, submission);
      const container = started.get(instanceId);
      started.delete(instanceId);
      const result = limit(() => grade(instanceId, container));
      result.catch(() => {});
      early.set(instanceId, { submission, result });
      pending.push(
        result.then(
          () => {},
          () => {},
        ),
      );
    },
    /**
     * Starts the fresh container an instance will be graded in, while its agent works (no grading waits
     * for a container start then). It is used by that instance's grading only, and removed unused when the
     * instance submits nothing or grading stops.
     */
    prepare,
    /** Queues the grading of a finished instance (an empty submission is recorded, not run). */
    submit(instanceId: string, submission: string): void {
      ended.add(instanceId);
      prediction(instanceId, submission);
      if (!submission) {
        const begun = early.get(instanceId);
        early.delete(instanceId);
        // A grading begun for a submission the instance did not keep leaves no logs behind.
        if (begun)
          pending.push(
            begun.result.then(
              (result) => {
                if (result) rmSync(result.logDir, { recursive: true, force: true });
              },
              () => {},
            ),
          );
        pending.push(discard(instanceId));
        // Recorded as `swerun eval` records it (the harness's empty_patch_ids), so both agree.
        if (specs.has(instanceId))
          recordEvalInRunJson(runJson, {
            run_id: options.runId,
            verdicts: { [instanceId]: { resolved: false, status: "empty_patch" } },
          });
        return;
      }
      pending.push(
        gradingOf(instanceId, submission).then(
          (result) => {
            if (!result) return;
            done += 1;
            if (result.resolved) resolved += 1;
            options.say(`eval ${verdictLine(result, done, done, resolved)}`);
            recordEvalInRunJson(runJson, {
              run_id: options.runId,
              verdicts: {
                [instanceId]: {
                  resolved: result.resolved,
                  status: result.status,
                  ...(result.error ? { error: result.error } : {}),
                },
              },
            });
          },
          (error) =>
            options.say(`eval ${instanceId}: ${error instanceof Error ? error.message : String(error)}`),
        ),
      );
    },
    /** Stops the running gradings (their containers are removed). */
    stop(): void {
      abort.abort();
      for (const instanceId of [...started.keys()]) pending.push(discard(instanceId));
    },
    /** Waits for the queued gradings, then writes the run report over the batch's instances. */
    async finish(): Promise<{ report: RunReport; path: string }> {
      finishing = true;
      // Containers started for instances that never ended (the batch was stopped) are not used.
      for (const instanceId of [...started.keys()]) pending.push(discard(instanceId));
      await Promise.all(pending);
      // Instances finished by an earlier run of the batch count with their predictions (and reports, if graded).
      const predsPath = join(options.folder, "preds.json");
      if (existsSync(predsPath)) {
        for (const prediction of readPredictions(predsPath))
          if (!predictions.has(prediction.instance_id)) predictions.set(prediction.instance_id, prediction);
      }
      const { report, path } = await writeRunReport({
        predictions,
        dataset: options.instances,
        runId: options.runId,
        outputDir,
        docker: options.docker,
      });
      recordEvalInRunJson(runJson, {
        run_id: options.runId,
        report: join("eval", path.slice(outputDir.length + 1)),
        verdicts: {},
      });
      return { report, path };
    },
  };
}
