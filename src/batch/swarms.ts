import type { Instance } from "../datasets/dataset.js";
import type { RunFacts } from "../facts/run-facts.js";
import { type SwarmEventStream, type SwarmIds, stopFigures } from "../run/swarm-events.js";
import type { InstanceResult } from "./instance.js";

export type SwarmStreams = (ids: SwarmIds, options?: { swarmName?: string }) => SwarmEventStream;

/**
 * A batch's event streams (`--events`): the batch is the root swarm (its run id, kept by a resumed batch),
 * each instance a child swarm `<run id>/<instance id>`. The root's totals count what this process ran.
 */
export class BatchSwarms {
  readonly #streams: SwarmStreams | undefined;
  readonly #runId: string;
  readonly #root: SwarmEventStream | undefined;
  readonly #totals = { cost: 0, tokens: 0, errors: 0, agents: new Set<string>() };

  constructor(streams: SwarmStreams | undefined, runId: string, name: string) {
    this.#streams = streams;
    this.#runId = runId;
    this.#root = streams?.({ swarmId: runId, executionId: runId }, { swarmName: name });
    this.#root?.start(`swerun swebench ${name}: solve each instance (a child swarm)`);
  }

  /** An instance that finished in an earlier run and is not run again. */
  skipped(instanceId: string, exitStatus: string | undefined): void {
    this.#root?.emit("instance_skipped", {
      instance_id: instanceId,
      exit_status: exitStatus,
      reason: "finished in an earlier run (--redo-existing runs it again)",
    });
  }

  /** The child swarm of an instance about to run, started (undefined without `--events`). */
  instance(instance: Instance): SwarmEventStream | undefined {
    const swarm = this.#streams?.({
      swarmId: `${this.#runId}/${instance.instance_id}`,
      parentSwarmId: this.#runId,
      executionId: this.#runId,
    });
    swarm?.start(instance.problem_statement);
    return swarm;
  }

  /**
   * An instance ended: `instance_end` and its swarm's `swarm_stop`, with its facts' figures (the cost, total
   * tokens and wall time every other output shows), which the root's totals add up.
   */
  ended(swarm: SwarmEventStream | undefined, result: InstanceResult, facts: RunFacts): void {
    if (!swarm) return;
    const figures = stopFigures(facts);
    swarm.emit("instance_end", {
      instance_id: result.instance_id,
      exit_status: facts.exit_status,
      cost: figures.totalCost,
      api_calls: facts.api_calls ?? result.api_calls,
      patch_bytes: Buffer.byteLength(facts.submission, "utf8"),
      duration: figures.duration,
    });
    swarm.stop({ success: facts.submitted, error: result.error, ...figures });
    this.#totals.cost += figures.totalCost ?? 0;
    this.#totals.tokens += figures.totalTokens ?? 0;
    if (result.error !== undefined) this.#totals.errors += 1;
    for (const agent of swarm.totals.agents) this.#totals.agents.add(agent);
  }

  /** An attempt lost with its Docker host: its swarm ends, and the instance runs again in a new one. */
  lost(swarm: SwarmEventStream | undefined, result: InstanceResult, host: string | undefined): void {
    swarm?.emit("instance_lost", { instance_id: result.instance_id, host, requeued: true });
    swarm?.stop({ success: false, totalCost: result.cost, error: result.error });
  }

  stop(status: string, exitStatuses: Record<string, number>, interrupted: boolean): void {
    this.#root?.stop({
      success: !interrupted && this.#totals.errors === 0,
      content: `${status}: ${Object.entries(exitStatuses)
        .map(([name, count]) => `${name} ${count}`)
        .join(", ")}`,
      totalCost: this.#totals.cost,
      totalTokens: this.#totals.tokens,
      agentsInvolved: [...this.#totals.agents],
      lastAgent: [...this.#totals.agents].at(-1),
    });
  }
}
