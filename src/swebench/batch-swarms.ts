import type { SwarmEventStream, SwarmIds } from "../run/swarm-events.js";
import type { Instance } from "./dataset.js";
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

  ended(swarm: SwarmEventStream | undefined, result: InstanceResult, durationMs: number): void {
    if (!swarm) return;
    swarm.emit("instance_end", {
      instance_id: result.instance_id,
      exit_status: result.exit_status,
      cost: result.cost,
      api_calls: result.api_calls,
      patch_bytes: Buffer.byteLength(result.submission, "utf8"),
      duration: Math.round(durationMs) / 1000,
    });
    swarm.stop({ success: result.exit_status === "Submitted", totalCost: result.cost, error: result.error });
    this.#totals.cost += result.cost;
    this.#totals.tokens += swarm.totals.tokens;
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
    });
  }
}
