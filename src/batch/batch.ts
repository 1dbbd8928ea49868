import { mkdirSync } from "node:fs";
import type { Agent } from "../agent/agent.js";
import type { DockerHostConfig } from "../config/docker-hosts.js";
import type { SwerunConfig } from "../config/schema.js";
import { type Instance, repeatedIds } from "../datasets/dataset.js";
import { UserError } from "../errors.js";
import { EventBus } from "../events.js";
import { onInterruptSignals } from "../run/signals.js";
import { chaosPoint } from "../util/chaos.js";
import { pathInside } from "../util/safe-path.js";
import { runWorkers } from "../util/worker-pool.js";
import type { BatchOptions, BatchSummary } from "./batch-options.js";
import { FINISHED_STATUSES, runInstance } from "./instance.js";
import { type OpenedBatch, openBatch } from "./open.js";
import { BatchOutcomes } from "./outcomes.js";
import type { Job } from "./scheduler.js";

/** Where a Kubernetes instance's pod is (environments/kubernetes/pod-state.ts's phases). */
type PodPhase = "pending" | "pulling" | "running";

/**
 * A batch, as states (the process's signals move it, see run/signals.ts):
 *
 * | state       | entered by                      | what it means                                      |
 * | ----------- | ------------------------------- | -------------------------------------------------- |
 * | running     | `run()`                         | workers take instances from the scheduler          |
 * | interrupted | first Ctrl-C, or an output that | no new instance starts; running ones finish        |
 * |             | cannot be written (full disk)   | (those that can no longer write their trajectory stop) |
 * | stopping    | second Ctrl-C or SIGTERM        | running agents stop with exit status Interrupted   |
 *
 * An instance:
 *
 * | state           | entered by                                   | then                                  |
 * | --------------- | -------------------------------------------- | ------------------------------------- |
 * | finished before | its trajectory's exit status (a resume)      | kept, not run (unless `redoExisting`) |
 * | queued          | `open` (`sortInstances`), or lost            | a worker takes it (`#runInstance`)    |
 * | started         | image ready; `onInstanceStart`               | its agent starts                      |
 * | running         | `onInstanceRunning`; `onInstanceSubmitted`   | ended, or lost                        |
 * | ended           | `BatchOutcomes.ended`: preds.json, run.json, log, display, `onInstanceEnd` | —      |
 * | not saved       | `BatchOutcomes.unsaved`: its trajectory could not be written | earlier trajectory kept; runs again on resume |
 * | lost            | `BatchOutcomes.lost`: its Docker host went away | queued again                       |
 *
 * When the workers are done, `#close` closes the images and hosts, has `BatchOutcomes.close` write the last
 * run.json (finished or interrupted), and releases the folder.
 */
type BatchState = "running" | "interrupted" | "stopping";

/**
 * Runs instances on `workers` parallel workers in this process and keeps the outputs of the folder
 * up to date after every instance: trajectories, preds.json, a log, run.json. First Ctrl-C: no new
 * instances start; second Ctrl-C or SIGTERM: running ones stop with exit status Interrupted.
 */
export async function runBatch(options: BatchOptions): Promise<BatchSummary> {
  const repeated = repeatedIds(options.instances).map(([id]) => id);
  if (repeated.length > 0) throw new UserError(`instance ids appear more than once: ${repeated.join(", ")}`);
  return (await BatchRun.open(options)).run();
}

class BatchRun {
  #state: BatchState = "running";
  /** The agent each worker runs, to stop them. */
  readonly #agents = new Map<number, Agent>();
  /** What the instances leave as they end: preds.json, run.json, the event streams. */
  readonly #outcomes: BatchOutcomes;
  /** Kubernetes: where each running instance's pod is (for the display's pods line). */
  readonly #podPhases = new Map<string, PodPhase>();

  private constructor(
    private readonly options: BatchOptions,
    private readonly opened: OpenedBatch,
  ) {
    this.#outcomes = new BatchOutcomes(options, opened);
  }

  /** Opens the batch (open.ts: the folder locked, an earlier run recovered, hosts and images open). */
  static async open(options: BatchOptions): Promise<BatchRun> {
    const opened = await openBatch(options);
    try {
      return new BatchRun(options, opened);
    } catch (error) {
      opened.pool?.close();
      opened.release();
      throw error;
    }
  }

  /** A resumed batch keeps its run id: its containers carry it, so a later resume or `cleanup --run-id` finds them. */
  get #runId(): string {
    return this.#outcomes.runId;
  }

  /** Runs the queued instances on the workers until the queue is empty or the batch is stopped. */
  async run(): Promise<BatchSummary> {
    const { options, opened } = this;
    const { pool, queue, scheduler, images } = opened;
    this.#outcomes.finishedBefore();
    this.#outcomes.save();
    chaosPoint("run-recorded");
    const workers = pool ? pool.workers : options.workers;
    opened.log(
      `run ${this.#runId}: ${queue.length} to run, ${options.instances.length - queue.length} finished before, ${workers} workers${pool ? ` on ${pool.hosts.length} Docker hosts` : ""}`,
    );
    if (pool) options.display.hosts?.(pool.status());
    options.display.start(queue.length, options.instances.length - queue.length);
    const signals = onInterruptSignals({
      interrupt: () => this.#interrupt(),
      stop: () => this.#stop(),
      third: "stop",
    });
    images?.started(() => this.#outcomes.save(), options.display);
    if (images) options.onImages?.(images.hold);
    try {
      await runWorkers({
        workers,
        next: () => scheduler.next(),
        work: (job, number) => this.#runInstance(job, number),
        stopping: () => this.#state !== "running" || opened.failure() !== undefined,
        putBack: (job) => scheduler.end(job, { requeue: true }),
      });
    } finally {
      try {
        await this.#close();
      } finally {
        signals.dispose();
      }
    }
    const failure = opened.failure();
    const unsaved = this.#outcomes.unsavedRuns;
    return {
      statuses: opened.statuses,
      cost: this.#outcomes.cost,
      interrupted: this.#state !== "running" && !failure,
      ...(pool?.stopped ? { hostsDown: true } : {}),
      ...(failure ? { outputFailure: failure } : {}),
      ...(unsaved.length > 0 ? { unsaved } : {}),
    };
  }

  /** First Ctrl-C: no new instance starts. */
  #interrupt(): void {
    this.#state = "interrupted";
    this.options.display.message(
      "Ctrl-C: no new instances will start; running ones finish. Press Ctrl-C again to stop them.",
    );
    this.opened.log("interrupt: no new instances");
  }

  /** Second Ctrl-C or SIGTERM: the running agents stop with exit status Interrupted. */
  #stop(): void {
    this.#state = "stopping";
    this.options.display.message("Stopping running instances (exit status Interrupted)...");
    this.opened.log("interrupt: stopping running instances");
    for (const agent of this.#agents.values()) agent.stop("Interrupted");
  }

  /** One instance on worker `number`: its image, its agent, then what it leaves (`BatchOutcomes`). */
  async #runInstance(job: Job, number: number): Promise<void> {
    const { options, opened } = this;
    const { instance } = job;
    const hostName = job.host?.docker.name;
    const hostConfig = job.host?.docker.config;
    const startedAt = Date.now();
    const folder = pathInside(options.outputDir, instance.instance_id);
    if (!opened.guard(folder, () => mkdirSync(folder, { recursive: true }))) {
      opened.scheduler.end(job, { requeue: true });
      return;
    }
    options.display.instanceStart(number, instance.instance_id, hostName);
    // The image first: a grading container started meanwhile would pull it as someone else's.
    await opened.images?.ready(instance, job.host);
    if (opened.failure()) {
      // An output failed while the image was readied: the instance does not start.
      opened.scheduler.end(job, { requeue: true });
      opened.images?.ended(instance, job.host);
      options.display.instanceLost?.(number, instance.instance_id);
      return;
    }
    options.onInstanceStart?.(instance.instance_id, hostConfig);
    opened.log(
      `${instance.instance_id}: start (worker ${number}${hostName ? `, Docker host ${hostName}` : ""})`,
    );
    const bus = this.#instanceBus(instance, number, hostConfig);
    const swarm = this.#outcomes.swarms.instance(instance);
    if (swarm) bus.subscribe(swarm.listener);
    const result = await runInstance(instance, {
      config: this.#configOn(job),
      outputDir: options.outputDir,
      runId: this.#runId,
      bus,
      startedAt,
      prepare: options.prepare,
      onAgent: (agent) => this.#agentChanged(number, agent),
      lost: async (error) => (job.host ? opened.scheduler.lost(job) : opened.scheduler.lostPod(job, error)),
      onPodPhase: (phase) => this.#podPhase(instance.instance_id, phase),
    });
    this.#podPhase(instance.instance_id, undefined);
    opened.scheduler.end(job, { ran: FINISHED_STATUSES.has(result.exit_status), requeue: result.lost });
    opened.images?.ended(instance, job.host);
    const ended = { job, number, result, swarm, startedAt };
    if (result.lost) this.#outcomes.lost(ended);
    else if (result.unsaved) this.#outcomes.unsaved(ended);
    else this.#outcomes.ended(ended);
  }

  /** Kubernetes: an instance's pod moved on (undefined: its instance ended); the display counts them. */
  #podPhase(instanceId: string, phase: PodPhase | undefined): void {
    const before = this.#podPhases.get(instanceId);
    if (phase === before) return;
    if (phase) this.#podPhases.set(instanceId, phase);
    else if (before) this.#podPhases.delete(instanceId);
    else return;
    const counts = { pending: 0, pulling: 0, running: 0 };
    for (const each of this.#podPhases.values()) counts[each]++;
    this.options.display.pods?.(counts);
  }

  /** The instance's environment runs on its host, and its trajectory records which one. */
  #configOn(job: Job): SwerunConfig {
    const { config } = this.options;
    if (!job.host || config.environment.environment_class !== "docker") return config;
    return { ...config, environment: { ...config.environment, docker_hosts: [job.host.docker.config] } };
  }

  /** The instance's events: to the display, the `--eval` hooks, the log. */
  #instanceBus(instance: Instance, number: number, host: DockerHostConfig | undefined): EventBus {
    const { options } = this;
    const id = instance.instance_id;
    const bus = new EventBus();
    bus.subscribe((event) => options.display.event(number, event));
    bus.subscribe((event) => {
      if (event.type === "run_start") options.onInstanceRunning?.(id, host);
      if (event.type === "run_end" && event.submission && FINISHED_STATUSES.has(event.exit_status))
        options.onInstanceSubmitted?.(id, event.submission, host);
      if (event.type === "action_start") chaosPoint("action-start");
      if (event.type === "model_retry")
        this.opened.log(`${id}: model retry ${event.attempt}: ${event.error}`);
    });
    return bus;
  }

  /** A worker's agent started (stopped at once when the batch is stopping) or ended (undefined). */
  #agentChanged(number: number, agent: Agent | undefined): void {
    if (!agent) {
      this.#agents.delete(number);
      return;
    }
    this.#agents.set(number, agent);
    if (this.#state === "stopping") agent.stop("Interrupted");
  }

  /** The workers are done: images and hosts closed, the last outputs written (`BatchOutcomes.close`), the folder released. */
  async #close(): Promise<void> {
    const { options, opened } = this;
    const { pool } = opened;
    await options.onWorkersDone?.();
    await opened.images?.close();
    for (const line of pool?.leftoverHints(this.#runId) ?? []) opened.say(line);
    pool?.close();
    options.display.stop();
    const status = this.#outcomes.close(this.#state !== "running");
    opened.log(`run ${this.#runId}: ${status}`);
    opened.release();
  }
}
