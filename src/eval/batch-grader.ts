import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import type Docker from "dockerode";
import type { DockerHostConfig } from "../config/docker-hosts.js";
import type { DockerEndpoint } from "../environments/docker/client.js";
import { DockerHost } from "../environments/docker/hosts.js";
import type { Instance } from "../swebench/dataset.js";
import { type Prediction, readPredictions } from "../swebench/predictions.js";
import { removeStaleTemps } from "../util/atomic-write.js";
import { chaosPoint } from "../util/chaos.js";
import type { EvalInstance } from "./eval-instance.js";
import { instanceFacts } from "./evaluate.js";
import { type GradeResult, gradeInstance, instanceLogDir } from "./grade-instance.js";
import { type GradingContainer, startGradingContainer } from "./grading-container.js";
import { LOG_FILES } from "./harness-constants.js";
import { limiter } from "./pool.js";
import { verdictLine } from "./progress.js";
import {
  isFinalVerdict,
  type RunJsonEval,
  type RunJsonVerdict,
  recordEvalInRunJson,
  verdictOf,
} from "./run-json.js";
import { type RunReport, writeRunReport } from "./run-report.js";

export interface BatchGraderOptions {
  /** The daemon gradings run on without a pool of hosts. */
  docker?: Docker;
  /**
   * The batch's pool of Docker hosts: each instance is graded on the host that ran it (its image is there);
   * a grading that fails because its host stopped answering is graded again on another host that answers.
   */
  hosts?: DockerHostConfig[];
  /** Where `hosts` came from, for messages. */
  hostsSource?: string;
  /** Grading specs of the batch's instances, and their dataset rows (for bundled fixtures). */
  instances: EvalInstance[];
  rows: Instance[];
  datasetDir?: string;
  /** The batch's output folder: logs go to `<folder>/eval`, verdicts into `<folder>/run.json`. */
  folder: string;
  /** The eval run id (its logs' folder, the run report's name). */
  runId: string;
  /** The batch's run id: the grading containers are labelled with it, as its agents' containers are. */
  containerRunId?: string;
  modelName: string;
  /** Gradings at once (the batch's workers). */
  workers: number;
  timeoutSeconds: number;
  network?: string;
  /** Told each verdict as a line, with the resolve rate so far. */
  say: (line: string) => void;
}

/** The verdicts of report.json files on disk, for the predictions that have one. */
function verdictsOnDisk(
  predictions: Iterable<Prediction>,
  outputDir: string,
  runId: string,
): Record<string, RunJsonVerdict> {
  const verdicts: Record<string, RunJsonVerdict> = {};
  for (const prediction of predictions) {
    const path = join(instanceLogDir(outputDir, runId, prediction), LOG_FILES.report);
    if (!existsSync(path)) continue;
    try {
      const entry = JSON.parse(readFileSync(path, "utf8"))[prediction.instance_id] as { resolved?: unknown };
      if (entry && typeof entry.resolved === "boolean")
        verdicts[prediction.instance_id] = {
          resolved: entry.resolved,
          status: entry.resolved ? "resolved" : "unresolved",
        };
    } catch {
      // an unreadable report is graded again
    }
  }
  return verdicts;
}

/** The verdicts run.json holds for the eval run `runId`. */
function recordedVerdicts(runJson: string, runId: string): Record<string, RunJsonVerdict> {
  try {
    const record = JSON.parse(readFileSync(runJson, "utf8")) as { eval?: RunJsonEval };
    return record.eval?.run_id === runId ? record.eval.instances : {};
  } catch {
    return {};
  }
}

/**
 * Removes the temp files of report.json and test_output.txt writes that a killed grading left in the
 * instances' log folders, and of the run id's run.json next to them.
 */
function removeStaleReportTemps(outputDir: string, runId: string, modelName: string): void {
  const dir = join(
    instanceLogDir(outputDir, runId, { instance_id: "", model_name_or_path: modelName, model_patch: "" }),
  );
  removeStaleTemps(dirname(dir));
  let ids: string[] = [];
  try {
    ids = readdirSync(dir);
  } catch {
    return;
  }
  for (const id of ids) removeStaleTemps(join(dir, id));
}

/** Gradings of one instance tried on another host after its host went away, at most. */
const MAX_GRADING_ATTEMPTS = 3;
/** How long a host may take to answer the ping after a failed grading. */
const PING_MS = 5000;

/** A client per host of the pool, by address. */
function hostDaemons(hosts: DockerHostConfig[], source: string): Map<string, DockerHost> {
  return new Map(hosts.map((host) => [host.host, new DockerHost(host, source)]));
}

/** The first host other than `except` that answers a ping. */
async function answeringHost(
  daemons: Map<string, DockerHost>,
  except: string,
): Promise<DockerHost | undefined> {
  for (const daemon of daemons.values())
    if (daemon.name !== except && (await daemon.ping(PING_MS)) === undefined) return daemon;
  return undefined;
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
  const containerRunId = options.containerRunId ?? options.runId;
  const predsPath = join(options.folder, "preds.json");
  const earlierPredictions = () => (existsSync(predsPath) ? readPredictions(predsPath) : []);

  // A resumed batch: verdicts already in report.json files reach run.json first, and the temp files of
  // report.json writes a kill interrupted go.
  removeStaleReportTemps(outputDir, options.runId, options.modelName);
  const onDisk = verdictsOnDisk(earlierPredictions(), outputDir, options.runId);
  if (Object.keys(onDisk).length > 0)
    recordEvalInRunJson(runJson, { run_id: options.runId, verdicts: onDisk });

  /** Grading containers started while their instance's agent works, by instance id (each used once). */
  const started = new Map<string, Promise<GradingContainer>>();
  /** Gradings begun when the agent submitted, before its environment was closed, by instance id. */
  const early = new Map<string, { submission: string; result: Promise<GradeResult | undefined> }>();

  /** The host each instance runs (or ran) on, with a pool. */
  const hostOf = new Map<string, DockerHostConfig>();
  const daemons = hostDaemons(options.hosts ?? [], options.hostsSource ?? "--docker-host");
  const daemonOf = (instanceId: string) => {
    const host = hostOf.get(instanceId);
    return host ? daemons.get(host.host) : undefined;
  };
  const clientOf = (instanceId: string): Docker => {
    const docker = daemonOf(instanceId)?.client() ?? options.docker;
    if (!docker) throw new Error(`no Docker host known for ${instanceId}`);
    return docker;
  };
  const noteHost = (instanceId: string, host: DockerHostConfig | undefined) => {
    if (host) hostOf.set(instanceId, host);
  };

  const imageReady = async (instance: EvalInstance) => {
    const row = rows.get(instance.instance_id);
    if (row?.fixture && options.datasetDir) {
      const { ensureFixtureImage } = await import("../images/fixture-image.js");
      const endpoint: DockerEndpoint | undefined = daemonOf(instance.instance_id)?.endpoint;
      await ensureFixtureImage(instance.image, row, options.datasetDir, endpoint);
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
    startedContainer: Promise<GradingContainer> | undefined,
  ): Promise<GradeResult | undefined> => {
    let container = startedContainer;
    const instance = specs.get(instanceId);
    const prediction = predictions.get(instanceId);
    if (!instance || !prediction) {
      await release(container);
      return undefined;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await imageReady(instance);
      } catch (error) {
        await release(container);
        throw error;
      }
      const daemon = daemonOf(instanceId);
      const result = await gradeInstance({
        docker: clientOf(instanceId),
        instance,
        prediction,
        runId: options.runId,
        containerRunId,
        outputDir,
        timeoutSeconds: options.timeoutSeconds,
        signal: abort.signal,
        ...(container ? { started: container } : {}),
        ...(options.network ? { network: options.network } : {}),
        ...(daemon ? { hostName: daemon.name } : {}),
      });
      if (result.status !== "error" || !daemon || abort.signal.aborted || attempt >= MAX_GRADING_ATTEMPTS)
        return result;
      // A grading that failed because its host went away is not a verdict: it is graded again elsewhere.
      const down = await daemon.ping(PING_MS);
      if (down === undefined) return result;
      const other = await answeringHost(daemons, daemon.name);
      if (!other) return result;
      options.say(
        `eval ${instanceId}: grading lost with Docker host ${daemon.name} (${down}); graded again on ${other.name}`,
      );
      hostOf.set(instanceId, other.config);
      container = undefined;
    }
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

  /** Tells a verdict and records it in run.json. */
  const tell = (result: GradeResult | undefined): void => {
    if (!result) return;
    chaosPoint("grading-ended");
    done += 1;
    if (result.resolved) resolved += 1;
    options.say(`eval ${verdictLine(result, done, done, resolved)}`);
    recordEvalInRunJson(runJson, {
      run_id: options.runId,
      verdicts: {
        [result.instance_id]: {
          ...verdictOf(result),
          ...(specs.get(result.instance_id)
            ? instanceFacts(specs.get(result.instance_id) as EvalInstance)
            : {}),
        },
      },
    });
  };
  const failed = (instanceId: string, error: unknown): void =>
    options.say(`eval ${instanceId}: ${error instanceof Error ? error.message : String(error)}`);

  /** Instances whose agent has submitted or ended: no grading container is started for them any more. */
  const ended = new Set<string>();
  let finishing = false;

  const prepare = (instanceId: string, host?: DockerHostConfig): void => {
    noteHost(instanceId, host);
    const instance = specs.get(instanceId);
    if (!instance || started.has(instanceId) || ended.has(instanceId)) return;
    if (finishing || abort.signal.aborted) return;
    const container = imageReady(instance).then(() =>
      startGradingContainer({
        docker: clientOf(instanceId),
        instance,
        runId: containerRunId,
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
    prepareEarly(instanceId: string, host?: DockerHostConfig): void {
      noteHost(instanceId, host);
      const instance = specs.get(instanceId);
      if (!instance || started.has(instanceId)) return;
      clientOf(instanceId)
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
    submitted(instanceId: string, submission: string, host?: DockerHostConfig): void {
      noteHost(instanceId, host);
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
    /**
     * An instance lost with its host goes back to the batch's queue: the grading container started for it
     * there is dropped (a new one is started where it runs again).
     */
    lost(instanceId: string): void {
      pending.push(discard(instanceId));
      hostOf.delete(instanceId);
    },
    /** Queues the grading of a finished instance (an empty submission is recorded, not run). */
    submit(instanceId: string, submission: string, host?: DockerHostConfig): void {
      noteHost(instanceId, host);
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
      pending.push(gradingOf(instanceId, submission).then(tell, (error) => failed(instanceId, error)));
    },
    /** Stops the running gradings (their containers are removed). */
    stop(): void {
      abort.abort();
      for (const instanceId of [...started.keys()]) pending.push(discard(instanceId));
    },
    /** Closes the connections to the pool's hosts (after `finish`). */
    close(): void {
      for (const daemon of daemons.values()) daemon.close();
    },
    /** Waits for the queued gradings, then writes the run report over the batch's instances. */
    async finish(): Promise<{ report: RunReport; path: string }> {
      finishing = true;
      // Containers started for instances that never ended (the batch was stopped) are not used.
      for (const instanceId of [...started.keys()]) pending.push(discard(instanceId));
      await Promise.all(pending);
      // Instances finished by an earlier run of the batch count with their predictions (and reports, if
      // graded); one with a submission and no verdict (its grading was interrupted) is graded now.
      const earlier = earlierPredictions().filter((entry) => !predictions.has(entry.instance_id));
      const recorded = recordedVerdicts(runJson, options.runId);
      const graded = verdictsOnDisk(earlier, outputDir, options.runId);
      const ungraded = earlier.filter(
        (entry) =>
          entry.model_patch &&
          specs.has(entry.instance_id) &&
          !graded[entry.instance_id] &&
          !isFinalVerdict(recorded[entry.instance_id]),
      );
      for (const entry of earlier) predictions.set(entry.instance_id, entry);
      if (!abort.signal.aborted)
        await Promise.all(
          ungraded.map((entry) =>
            limit(() => grade(entry.instance_id, undefined)).then(tell, (error) =>
              failed(entry.instance_id, error),
            ),
          ),
        );
      const { report, path } = await writeRunReport({
        predictions,
        dataset: options.instances,
        runId: options.runId,
        containerRunId,
        outputDir,
        ...(options.docker ? { docker: options.docker } : {}),
      });
      // run.json holds every verdict on disk, also those of gradings a kill cut off before recording them.
      recordEvalInRunJson(runJson, {
        run_id: options.runId,
        report: join("eval", path.slice(outputDir.length + 1)),
        verdicts: verdictsOnDisk(predictions.values(), outputDir, options.runId),
      });
      return { report, path };
    },
  };
}
