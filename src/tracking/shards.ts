import { dirname } from "node:path";
import { UserError } from "../errors.js";
import { caseTotals } from "./metrics.js";
import type { RunState, StoredRun } from "./store.js";

/** What shards of one run share: the resolved config, the selection (but the shard) and the shard count. */
function shardGroup(run: StoredRun): string | undefined {
  const shard = run.dataset?.shard;
  if (!shard || !run.dataset) return undefined;
  const { shard: _, ...selection } = run.dataset;
  const count = shard.split("/")[1];
  return JSON.stringify([run.agent?.config_sha256 ?? run.model, selection, count, run.label]);
}

const shardIndex = (run: StoredRun) => Number(run.dataset?.shard?.split("/")[0]);
const shardCount = (run: StoredRun) => Number(run.dataset?.shard?.split("/")[1]);

/** The shard numbers (1-based) a set of shard runs lacks, and those present twice. */
export function shardCoverage(runs: StoredRun[]): { count: number; missing: number[]; twice: number[] } {
  const count = shardCount(runs[0] as StoredRun);
  const seen = runs.map(shardIndex);
  return {
    count,
    missing: Array.from({ length: count }, (_, i) => i + 1).filter((i) => !seen.includes(i)),
    twice: [...new Set(seen.filter((i, at) => seen.indexOf(i) !== at))],
  };
}

/**
 * Checks that run folders are shards of one run (`--merge-shards`): each has a shard, and all share the
 * config, the selection and the shard count. Returns what is missing or doubled, for the caller to say.
 */
export function checkShards(runs: StoredRun[]): { count: number; missing: number[]; twice: number[] } {
  const unsharded = runs.filter((run) => !run.dataset?.shard);
  if (unsharded.length > 0)
    throw new UserError(
      `--merge-shards: ${unsharded.map((run) => run.dir).join(", ")}: not a shard (no --shard)`,
    );
  const groups = new Set(runs.map(shardGroup));
  if (groups.size > 1) {
    throw new UserError(
      `--merge-shards: the folders are shards of different runs (config, selection, label or shard count differ): ${runs.map((run) => `${run.dir} (${run.dataset?.shard})`).join(", ")}`,
    );
  }
  return shardCoverage(runs);
}

const worst = (states: RunState[]): RunState =>
  states.includes("running") ? "running" : states.includes("partial") ? "partial" : "complete";

/** One run for every group of shard runs (`swerun runs --merge-shards`); other runs stay as they are. */
export function mergeShardRuns(runs: StoredRun[]): StoredRun[] {
  const groups = new Map<string, StoredRun[]>();
  const merged: StoredRun[] = [];
  for (const run of runs) {
    const key = shardGroup(run);
    if (key === undefined) merged.push(run);
    else groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  for (const shards of groups.values()) {
    shards.sort((a, b) => shardIndex(a) - shardIndex(b));
    const first = shards[0] as StoredRun;
    const { missing } = shardCoverage(shards);
    const cases = Object.assign({}, ...shards.map((run) => run.cases));
    merged.push({
      ...first,
      id: `${first.id}+${shards.length - 1}`,
      dir: dirname(first.dir),
      created: shards.map((run) => run.created).sort()[0] ?? first.created,
      ended: shards.some((run) => run.ended === null)
        ? null
        : (shards
            .map((run) => run.ended ?? "")
            .sort()
            .at(-1) ?? null),
      state: missing.length > 0 ? "partial" : worst(shards.map((run) => run.state)),
      total: shards.reduce((sum, run) => sum + run.total, 0),
      cases,
      totals: caseTotals(Object.values(cases) as Array<StoredRun["cases"][string]>),
      dataset: first.dataset
        ? { ...first.dataset, shard: `${shards.map(shardIndex).join(",")}/${shardCount(first)}` }
        : null,
      record: { shards: shards.map((run) => ({ id: run.id, dir: run.dir, shard: run.dataset?.shard })) },
    });
  }
  return merged.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
}
