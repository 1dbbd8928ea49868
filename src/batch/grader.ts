import { rmSync } from "node:fs";
import type Docker from "dockerode";
import type { DockerHostConfig } from "../config/docker-hosts.js";
import type { KubernetesEnvironmentConfig } from "../config/schema.js";
import type { Instance } from "../datasets/dataset.js";
import type { Prediction } from "../datasets/predictions.js";
import { verdictsOnDisk } from "../eval/earlier-gradings.js";
import type { EvalInstance } from "../eval/eval-instance.js";
import { type GradeResult, gradeInstance } from "../eval/grade-instance.js";
import type { GradingContainer } from "../eval/grading-container.js";
import { finishGrading } from "../eval/grading-driver.js";
import type { RunReport } from "../eval/harness-report.js";
import { limiter } from "../util/worker-pool.js";
import { GradingHosts } from "./grading-hosts.js";
import { type EarlyGrading, GradingSlots, release, type Slot, settled } from "./grading-slots.js";
import { GradingVerdicts } from "./grading-verdicts.js";
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
  readonly #slots = new GradingSlots();
  readonly #predictions = new Map<string, Prediction>();
  /** Where the gradings run (hosts, pods) and their images. */
  readonly #hosts: GradingHosts;
  readonly #limit: <R>(run: () => Promise<R>) => Promise<R>;
  readonly #abort = new AbortController();
  /** Everything begun that `finish` waits for (never rejects). */
  readonly #pending: Array<Promise<void>> = [];
  /** What becomes of verdicts: told, recorded in run.json (and those of an earlier run of the batch). */
  readonly #verdicts: GradingVerdicts;
  readonly #containerRunId: string;
  #finishing = false;
  #drained: Promise<void> | undefined;

  constructor(options: BatchGraderOptions) {
    this.#options = options;
    this.#specs = new Map(options.instances.map((spec) => [spec.instance_id, spec]));
    this.#limit = limiter(Math.max(1, options.workers));
    this.#containerRunId = options.containerRunId ?? options.runId;
    this.#hosts = new GradingHosts(options, this.#containerRunId, (id) => this.#slots.hostOf(id));
    this.#verdicts = new GradingVerdicts(options, this.#specs);
  }

  /**
   * Starts the instance's grading container as its agent's environment starts, when the image is already
   * on the daemon (the two container starts overlap; an image still to pull or build waits for `prepare`).
   */
  prepareEarly(instanceId: string, host?: DockerHostConfig): void {
    const slot = this.#slots.of(instanceId, host);
    const instance = this.#specs.get(instanceId);
    if (!instance || slot.container) return;
    // A cluster's node pulls the image itself: the pod starts now.
    if (this.#options.kubernetes) {
      this.prepare(instanceId);
      return;
    }
    this.#hosts
      .client(instanceId)
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
    const slot = this.#slots.of(instanceId, host);
    const instance = this.#specs.get(instanceId);
    if (!instance || slot.container || slot.ended) return;
    if (this.#finishing || this.#abort.signal.aborted) return;
    const container = this.#hosts.imageReady(instance).then(() => this.#hosts.startContainer(instance));
    container.catch(() => {});
    slot.container = container;
  }

  /**
   * Begins grading a submission as soon as the agent submits (the grading overlaps the removal of the
   * agent's container and the saving of its trajectory); its verdict is told and recorded by `submit`.
   */
  submitted(instanceId: string, submission: string, host?: DockerHostConfig): void {
    const slot = this.#slots.of(instanceId, host);
    slot.ended = true;
    if (!submission || slot.early || this.#abort.signal.aborted || !this.#specs.has(instanceId)) return;
    this.#predict(instanceId, submission);
    const container = this.#slots.take(slot);
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
    const slot = this.#slots.of(instanceId);
    this.#pending.push(release(this.#slots.take(slot)));
    slot.host = undefined;
  }

  /** Queues the grading of a finished instance (an empty submission is recorded, not run). */
  submit(instanceId: string, submission: string, host?: DockerHostConfig): void {
    const slot = this.#slots.of(instanceId, host);
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
    this.#hosts.close();
  }

  /**
   * The batch's images: a grading whose image is not on its daemon (graded again on another host, an earlier
   * submission graded by `drain`) pulls it through them, within the budget and in the run's ledger.
   */
  useImages(hold: HoldImage): void {
    this.#hosts.useImages(hold);
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
      outputDir: this.#verdicts.outputDir,
      ...(this.#options.docker ? { docker: this.#options.docker } : {}),
      runJson: this.#verdicts.runJson,
      // run.json holds every verdict on disk, also those of gradings a kill cut off before recording them.
      verdicts: () =>
        verdictsOnDisk(this.#predictions.values(), this.#verdicts.outputDir, this.#options.runId),
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
          (result) => this.#verdicts.tell(result),
          (error) => this.#verdicts.failed(instanceId, error),
        ),
      );
      return;
    }
    if (begun)
      this.#wait(
        begun.result.then((result) => result && rmSync(result.logDir, { recursive: true, force: true })),
      );
    this.#pending.push(release(this.#slots.take(slot)));
    this.#verdicts.emptyPatch(instanceId);
  }

  /** The grading of a submission: the one begun early for it, or a new one (after any early one ended). */
  #gradingOf(
    instanceId: string,
    slot: Slot,
    submission: string,
    begun: EarlyGrading | undefined,
  ): Promise<GradeResult | undefined> {
    if (begun?.submission === submission) return begun.result;
    const container = this.#slots.take(slot);
    const after = begun ? settled(begun.result) : Promise.resolve();
    return after.then(() => this.#limit(() => this.#grade(instanceId, container)));
  }

  /**
   * Instances finished by an earlier run of the batch count with their predictions (and reports, if
   * graded); one with a submission and no verdict (its grading was interrupted) is graded now.
   */
  async #gradeEarlier(): Promise<void> {
    const { earlier, ungraded } = this.#verdicts.earlier(this.#predictions);
    for (const entry of earlier) this.#predictions.set(entry.instance_id, entry);
    if (this.#abort.signal.aborted) return;
    await Promise.all(
      ungraded.map((entry) =>
        this.#limit(() => this.#grade(entry.instance_id, undefined)).then(
          (result) => this.#verdicts.tell(result),
          (error) => this.#verdicts.failed(entry.instance_id, error),
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
        await this.#hosts.imageReady(instance);
      } catch (error) {
        await release(container);
        throw error;
      }
      const daemon = this.#hosts.daemon(instanceId);
      const letGo = await this.#hosts.holdImage(instance, daemon, this.#abort.signal.aborted);
      const kubernetes = this.#options.kubernetes;
      const result = await gradeInstance({
        ...(kubernetes
          ? { startContainer: (hooks) => this.#hosts.startContainer(instance, hooks) }
          : { docker: this.#hosts.client(instanceId) }),
        instance,
        prediction,
        runId: this.#options.runId,
        containerRunId: this.#containerRunId,
        outputDir: this.#verdicts.outputDir,
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
      const other = await this.#hosts.hostInstead(instanceId, daemon);
      if (!other) return result;
      this.#slots.of(instanceId).host = other.config;
      container = undefined;
    }
  }

  /** Removes the grading containers no grading took. */
  #releaseUnused(): void {
    this.#pending.push(...this.#slots.releaseUnused());
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
}

/** The grader of a `swebench --eval` batch (see `BatchGrader`). */
export function batchGrader(options: BatchGraderOptions): BatchGrader {
  return new BatchGrader(options);
}
