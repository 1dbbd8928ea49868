import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import type { DockerHostConfig } from "../config/docker-hosts.js";
import type { KubernetesEnvironmentConfig } from "../config/schema.js";
import type { Instance } from "../datasets/dataset.js";
import { type Prediction, readPredictions } from "../datasets/predictions.js";
import { DockerHost } from "../environments/docker/hosts.js";
import { recordedVerdicts, removeStaleReportTemps, verdictsOnDisk } from "../eval/earlier-gradings.js";
import type { EvalInstance } from "../eval/eval-instance.js";
import { type GradeResult, gradeInstance, type StartHooks } from "../eval/grade-instance.js";
import { type GradingContainer, startGradingContainer } from "../eval/grading-container.js";
import { verdictLine } from "../eval/grading-display.js";
import { finishGrading, fixtureImageReady, recordVerdict } from "../eval/grading-driver.js";
import type { RunReport } from "../eval/harness-report.js";
import { isFinalVerdict, recordEvalInRunJson } from "../eval/verdict-record.js";
import { runJsonPath } from "../formats/run-json.js";
import { chaosPoint } from "../util/chaos.js";
import { limiter } from "../util/worker-pool.js";
import type { HoldImage } from "./images.js";

export interface BatchGraderOptions {
  /** The daemon gradings run on without a pool of hosts. */
  docker?: Docker;
  /** A batch on Kubernetes: each grading runs in a fresh pod on the batch's cluster (grading-pod.ts). */
  kubernetes?: KubernetesEnvironmentConfig;
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

/** A grading begun as the agent submitted, before its environment was closed. */
interface EarlyGrading {
  submission: string;
  result: Promise<GradeResult | undefined>;
}

/** Where one instance's grading stands (see the table above `BatchGrader`). */
interface Slot {
  /** The host the instance runs (or ran) on, with a pool. */
  host?: DockerHostConfig;
  /** The grading container started while its agent works (used by its grading once). */
  container?: Promise<GradingContainer>;
  /** The grading begun when its agent submitted. */
  early?: EarlyGrading;
  /** Its agent has submitted or ended: no grading container is started for it any more. */
  ended?: boolean;
}

/**
 * `swebench --eval`: grades each instance as soon as the batch finishes it, in a fresh container, while the
 * batch's workers go on (at most `workers` gradings at once); `finish` waits for the last one and writes
 * the run report. The batch tells it its instances' events (batch.ts's hooks); for each instance:
 *
 * | batch event (method)               | what the grader does                                                   |
 * | ---------------------------------- | ---------------------------------------------------------------------- |
 * | instance starts (`prepareEarly`)   | its image already on the daemon: starts its grading container          |
 * | agent starts (`prepare`)           | starts its grading container, unless started or ended                  |
 * | agent submits (`submitted`)        | begins grading the submission (overlaps the agent's teardown)          |
 * | instance ends (`submit`)           | `#instanceEnded`: the verdict told and recorded (empty: empty_patch)   |
 * | instance lost (`lost`)             | its container removed; it starts over where it runs again              |
 *
 * and for the grader: grading → (`stop`: second Ctrl-C, SIGTERM) stopped: running gradings abort, unused
 * containers go; `finish`: unused containers go, earlier ungraded submissions are graded, the report written.
 */
export class BatchGrader {
  readonly #options: BatchGraderOptions;
  readonly #specs: Map<string, EvalInstance>;
  readonly #rows: Map<string, Instance>;
  readonly #slots = new Map<string, Slot>();
  readonly #predictions = new Map<string, Prediction>();
  readonly #daemons: Map<string, DockerHost>;
  readonly #limit: <R>(run: () => Promise<R>) => Promise<R>;
  readonly #abort = new AbortController();
  /** Everything begun that `finish` waits for (never rejects). */
  readonly #pending: Array<Promise<void>> = [];
  readonly #outputDir: string;
  readonly #runJson: string;
  readonly #containerRunId: string;
  #finishing = false;
  #drained: Promise<void> | undefined;
  /** The batch's images (a Docker batch): gradings get their images through them. */
  #images: HoldImage | undefined;
  #done = 0;
  #resolved = 0;

  constructor(options: BatchGraderOptions) {
    this.#options = options;
    this.#specs = new Map(options.instances.map((spec) => [spec.instance_id, spec]));
    this.#rows = new Map(options.rows.map((row) => [row.instance_id, row]));
    this.#daemons = hostDaemons(options.hosts ?? [], options.hostsSource ?? "--docker-host");
    this.#limit = limiter(Math.max(1, options.workers));
    this.#outputDir = join(options.folder, "eval");
    this.#runJson = runJsonPath(options.folder);
    this.#containerRunId = options.containerRunId ?? options.runId;
    // A resumed batch: verdicts already in report.json files reach run.json first, and the temp files of
    // report.json writes a kill interrupted go.
    removeStaleReportTemps(this.#outputDir, options.runId, options.modelName);
    const onDisk = verdictsOnDisk(this.#earlierPredictions(), this.#outputDir, options.runId);
    if (Object.keys(onDisk).length > 0)
      recordEvalInRunJson(this.#runJson, { run_id: options.runId, verdicts: onDisk });
  }

  /**
   * Starts the instance's grading container as its agent's environment starts, when the image is already
   * on the daemon (the two container starts overlap; an image still to pull or build waits for `prepare`).
   */
  prepareEarly(instanceId: string, host?: DockerHostConfig): void {
    const slot = this.#slot(instanceId, host);
    const instance = this.#specs.get(instanceId);
    if (!instance || slot.container) return;
    // A cluster's node pulls the image itself: the pod starts now.
    if (this.#options.kubernetes) {
      this.prepare(instanceId);
      return;
    }
    this.#client(instanceId)
      .getImage(instance.image)
      .inspect()
      .then(
        () => this.prepare(instanceId),
        () => {},
      );
  }

  /**
   * Starts the fresh container an instance will be graded in, while its agent works (no grading waits
   * for a container start then). It is used by that instance's grading only, and removed unused when the
   * instance submits nothing or grading stops.
   */
  prepare(instanceId: string, host?: DockerHostConfig): void {
    const slot = this.#slot(instanceId, host);
    const instance = this.#specs.get(instanceId);
    if (!instance || slot.container || slot.ended) return;
    if (this.#finishing || this.#abort.signal.aborted) return;
    const container = this.#imageReady(instance).then(() => this.#startContainer(instance));
    container.catch(() => {});
    slot.container = container;
  }

  /**
   * Begins grading a submission as soon as the agent submits (the grading overlaps the removal of the
   * agent's container and the saving of its trajectory); its verdict is told and recorded by `submit`.
   */
  submitted(instanceId: string, submission: string, host?: DockerHostConfig): void {
    const slot = this.#slot(instanceId, host);
    slot.ended = true;
    if (!submission || slot.early || this.#abort.signal.aborted || !this.#specs.has(instanceId)) return;
    this.#predict(instanceId, submission);
    const container = this.#takeContainer(slot);
    const result = this.#limit(() => this.#grade(instanceId, container));
    result.catch(() => {});
    slot.early = { submission, result };
    this.#wait(result);
  }

  /**
   * An instance lost with its host goes back to the batch's queue: the grading container started for it
   * there is dropped (a new one is started where it runs again).
   */
  lost(instanceId: string): void {
    const slot = this.#slot(instanceId);
    this.#pending.push(release(this.#takeContainer(slot)));
    slot.host = undefined;
  }

  /** Queues the grading of a finished instance (an empty submission is recorded, not run). */
  submit(instanceId: string, submission: string, host?: DockerHostConfig): void {
    const slot = this.#slot(instanceId, host);
    slot.ended = true;
    this.#predict(instanceId, submission);
    this.#instanceEnded(instanceId, slot, submission);
  }

  /** Stops the running gradings (their containers are removed). */
  stop(): void {
    this.#abort.abort();
    this.#releaseUnused();
  }

  /** Closes the connections to the pool's hosts (after `finish`). */
  close(): void {
    for (const daemon of this.#daemons.values()) daemon.close();
  }

  /**
   * The batch's images: a grading whose image is not on its daemon (graded again on another host, an earlier
   * submission graded by `drain`) pulls it through them, within the budget and in the run's ledger.
   */
  useImages(hold: HoldImage): void {
    this.#images = hold;
  }

  /**
   * The batch's workers are done (its images still open): waits for the queued gradings, then grades the
   * earlier ungraded submissions. Once; `finish` calls it too.
   */
  drain(): Promise<void> {
    this.#drained ??= (async () => {
      this.#finishing = true;
      // Containers started for instances that never ended (the batch was stopped) are not used.
      this.#releaseUnused();
      await Promise.all(this.#pending);
      await this.#gradeEarlier();
    })();
    return this.#drained;
  }

  /** Waits for the queued gradings, then writes the run report over the batch's instances. */
  async finish(): Promise<{ report: RunReport; path: string }> {
    await this.drain();
    const { report, path } = await finishGrading({
      predictions: this.#predictions,
      dataset: this.#options.instances,
      runId: this.#options.runId,
      containerRunId: this.#containerRunId,
      outputDir: this.#outputDir,
      ...(this.#options.docker ? { docker: this.#options.docker } : {}),
      runJson: this.#runJson,
      // run.json holds every verdict on disk, also those of gradings a kill cut off before recording them.
      verdicts: () => verdictsOnDisk(this.#predictions.values(), this.#outputDir, this.#options.runId),
    });
    return { report, path };
  }

  /**
   * What happens when an instance ends: a submission is graded (the grading begun for it when its agent
   * submitted, or a new one) and its verdict told and recorded; an empty one is recorded as the harness's
   * empty_patch, its unused container removed and the logs of a grading begun for a submission it did not
   * keep removed.
   */
  #instanceEnded(instanceId: string, slot: Slot, submission: string): void {
    const begun = slot.early;
    slot.early = undefined;
    if (submission) {
      const grading = this.#gradingOf(instanceId, slot, submission, begun);
      this.#pending.push(
        grading.then(
          (result) => this.#tell(result),
          (error) => this.#failed(instanceId, error),
        ),
      );
      return;
    }
    if (begun)
      this.#wait(
        begun.result.then((result) => result && rmSync(result.logDir, { recursive: true, force: true })),
      );
    this.#pending.push(release(this.#takeContainer(slot)));
    // Recorded as `swerun eval` records it (the harness's empty_patch_ids), so both agree.
    if (this.#specs.has(instanceId))
      recordEvalInRunJson(this.#runJson, {
        run_id: this.#options.runId,
        verdicts: { [instanceId]: { resolved: false, status: "empty_patch" } },
      });
  }

  /** The grading of a submission: the one begun early for it, or a new one (after any early one ended). */
  #gradingOf(
    instanceId: string,
    slot: Slot,
    submission: string,
    begun: EarlyGrading | undefined,
  ): Promise<GradeResult | undefined> {
    if (begun?.submission === submission) return begun.result;
    const container = this.#takeContainer(slot);
    const after = begun ? settled(begun.result) : Promise.resolve();
    return after.then(() => this.#limit(() => this.#grade(instanceId, container)));
  }

  /**
   * Instances finished by an earlier run of the batch count with their predictions (and reports, if
   * graded); one with a submission and no verdict (its grading was interrupted) is graded now.
   */
  async #gradeEarlier(): Promise<void> {
    const { runId } = this.#options;
    const earlier = this.#earlierPredictions().filter((entry) => !this.#predictions.has(entry.instance_id));
    const recorded = recordedVerdicts(this.#runJson, runId);
    const graded = verdictsOnDisk(earlier, this.#outputDir, runId);
    const ungraded = earlier.filter(
      (entry) =>
        entry.model_patch &&
        this.#specs.has(entry.instance_id) &&
        !graded[entry.instance_id] &&
        !isFinalVerdict(recorded[entry.instance_id]),
    );
    for (const entry of earlier) this.#predictions.set(entry.instance_id, entry);
    if (this.#abort.signal.aborted) return;
    await Promise.all(
      ungraded.map((entry) =>
        this.#limit(() => this.#grade(entry.instance_id, undefined)).then(
          (result) => this.#tell(result),
          (error) => this.#failed(entry.instance_id, error),
        ),
      ),
    );
  }

  /**
   * Grades an instance's prediction (in `startedContainer` when one was started for it); a grading that
   * failed because its host went away is not a verdict: it is graded again on another host that answers.
   */
  async #grade(
    instanceId: string,
    startedContainer: Promise<GradingContainer> | undefined,
  ): Promise<GradeResult | undefined> {
    let container = startedContainer;
    const instance = this.#specs.get(instanceId);
    const prediction = this.#predictions.get(instanceId);
    if (!instance || !prediction) {
      await release(container);
      return undefined;
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#imageReady(instance);
      } catch (error) {
        await release(container);
        throw error;
      }
      const daemon = this.#daemon(instanceId);
      const letGo = await this.#holdImage(instance, daemon);
      const kubernetes = this.#options.kubernetes;
      const result = await gradeInstance({
        ...(kubernetes
          ? { startContainer: (hooks) => this.#startContainer(instance, hooks) }
          : { docker: this.#client(instanceId) }),
        instance,
        prediction,
        runId: this.#options.runId,
        containerRunId: this.#containerRunId,
        outputDir: this.#outputDir,
        timeoutSeconds: this.#options.timeoutSeconds,
        signal: this.#abort.signal,
        ...(container ? { started: container } : {}),
        ...(this.#options.network ? { network: this.#options.network } : {}),
        ...(daemon ? { hostName: daemon.name } : {}),
      }).finally(letGo);
      if (
        result.status !== "error" ||
        !daemon ||
        this.#abort.signal.aborted ||
        attempt >= MAX_GRADING_ATTEMPTS
      )
        return result;
      const other = await this.#hostInstead(instanceId, daemon);
      if (!other) return result;
      container = undefined;
    }
  }

  /** A fresh grading container for `instance`: a pod on the batch's cluster, or a container on its daemon. */
  async #startContainer(instance: EvalInstance, hooks?: StartHooks): Promise<GradingContainer> {
    const kubernetes = this.#options.kubernetes;
    if (kubernetes) {
      const { startGradingPod } = await import("../eval/grading-pod.js");
      return startGradingPod({
        environment: kubernetes,
        instance,
        runId: this.#containerRunId,
        ...(hooks ? { hooks } : {}),
      });
    }
    return startGradingContainer({
      docker: this.#client(instance.instance_id),
      instance,
      runId: this.#containerRunId,
      ...(this.#options.network ? { network: this.#options.network } : {}),
      ...(hooks ? hooks : {}),
    });
  }

  /** After a failed grading on `daemon`: when it is down, another host that answers (noted as the instance's). */
  async #hostInstead(instanceId: string, daemon: DockerHost): Promise<DockerHost | undefined> {
    const down = await daemon.ping(PING_MS);
    if (down === undefined) return undefined;
    const other = await answeringHost(this.#daemons, daemon.name);
    if (!other) return undefined;
    this.#options.say(
      `eval ${instanceId}: grading lost with Docker host ${daemon.name} (${down}); graded again on ${other.name}`,
    );
    this.#slot(instanceId).host = other.config;
    return other;
  }

  /** Tells a verdict and records it in run.json. */
  #tell(result: GradeResult | undefined): void {
    if (!result) return;
    chaosPoint("grading-ended");
    this.#done += 1;
    if (result.resolved) this.#resolved += 1;
    this.#options.say(`eval ${verdictLine(result, this.#done, this.#done, this.#resolved)}`);
    recordVerdict(this.#runJson, this.#options.runId, result, this.#specs.get(result.instance_id));
  }

  #failed(instanceId: string, error: unknown): void {
    this.#options.say(`eval ${instanceId}: ${error instanceof Error ? error.message : String(error)}`);
  }

  /** The instance's slot (made on first use), noting the host it runs on. */
  #slot(instanceId: string, host?: DockerHostConfig): Slot {
    let slot = this.#slots.get(instanceId);
    if (!slot) {
      slot = {};
      this.#slots.set(instanceId, slot);
    }
    if (host) slot.host = host;
    return slot;
  }

  /** The slot's grading container, now the caller's (it is used once). */
  #takeContainer(slot: Slot): Promise<GradingContainer> | undefined {
    const container = slot.container;
    slot.container = undefined;
    return container;
  }

  /** Removes the grading containers no grading took. */
  #releaseUnused(): void {
    for (const slot of this.#slots.values())
      if (slot.container) this.#pending.push(release(this.#takeContainer(slot)));
  }

  #wait(work: Promise<unknown>): void {
    this.#pending.push(settled(work));
  }

  #predict(instanceId: string, submission: string): void {
    this.#predictions.set(instanceId, {
      model_name_or_path: this.#options.modelName,
      instance_id: instanceId,
      model_patch: submission,
    });
  }

  #earlierPredictions(): Prediction[] {
    const path = join(this.#options.folder, "preds.json");
    return existsSync(path) ? readPredictions(path) : [];
  }

  #daemon(instanceId: string): DockerHost | undefined {
    const host = this.#slots.get(instanceId)?.host;
    return host ? this.#daemons.get(host.host) : undefined;
  }

  #client(instanceId: string): Docker {
    const docker = this.#daemon(instanceId)?.client() ?? this.#options.docker;
    if (!docker) throw new Error(`no Docker host known for ${instanceId}`);
    return docker;
  }

  /** The instance's image held on `daemon` through the batch's images, when the batch has them. */
  async #holdImage(instance: EvalInstance, daemon: DockerHost | undefined): Promise<() => void> {
    if (!this.#images || this.#abort.signal.aborted) return () => {};
    return this.#images(instance.image, daemon?.config.host).catch((error: unknown) => {
      this.#failed(instance.instance_id, error);
      return () => {};
    });
  }

  #imageReady(instance: EvalInstance): Promise<void> {
    // A bundled instance's image is built in Docker; a cluster's nodes must have it already.
    if (this.#options.kubernetes) return Promise.resolve();
    const row = this.#rows.get(instance.instance_id);
    return fixtureImageReady(
      instance,
      row,
      this.#options.datasetDir,
      this.#daemon(instance.instance_id)?.endpoint,
    );
  }
}

/** The grader of a `swebench --eval` batch (see `BatchGrader`). */
export function batchGrader(options: BatchGraderOptions): BatchGrader {
  return new BatchGrader(options);
}

/** Removes a grading container no grading will use (once it has started, if it does). */
async function release(container: Promise<GradingContainer> | undefined): Promise<void> {
  await container?.then(
    (grading) => grading.remove().catch(() => {}),
    () => {},
  );
}

/** Resolves when `work` ends, however it ends. */
function settled(work: Promise<unknown>): Promise<void> {
  return work.then(
    () => {},
    () => {},
  );
}
