import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { runCli } from "../helpers/cli.js";
import { recordSeedRuns, type SeedRun } from "../helpers/seed-runs.js";

// biome-ignore lint/suspicious/noExplicitAny: the outputs are JSON read back to check their shape
export type Json = any;

/** One single run's outputs: its live report, the report `swerun report` writes later, both exports. */
export interface RunOutputs {
  run: SeedRun;
  trajectory: Json;
  /** `--report`'s file. */
  report: Json;
  /** `swerun report <trajectory>`. */
  later: Json;
  summary: Json;
  judge: Json;
  markdown: string;
}

/** Everything the conformance tests read: the single runs by name, and the batch's outputs. */
export interface SeedOutputs {
  runs: Record<string, RunOutputs>;
  batch: {
    run: SeedRun;
    summaries: Json[];
    judges: Json[];
    markdown: string;
    trajectories: Record<string, Json>;
  };
}

const json = (path: string) => JSON.parse(readFileSync(path, "utf8"));
const lines = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));

async function ok(args: string[]) {
  const result = await runCli(args);
  expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

/** Records the seed runs under `root` and reads every output of each through the CLI. */
export async function seedOutputs(root: string): Promise<SeedOutputs> {
  const recorded = await recordSeedRuns(root);
  const runs: Record<string, RunOutputs> = {};
  const { batch, ...singles } = recorded;
  await Promise.all(
    Object.values(singles).map(async (run) => {
      const judge = join(run.dir, "judge");
      const [later, summary] = await Promise.all([
        ok(["report", run.trajectory]),
        ok(["export", run.trajectory, "--format", "summary"]),
        ok(["export", run.trajectory, "--format", "judge", "-o", judge]),
      ]);
      runs[run.name] = {
        run,
        trajectory: json(run.trajectory),
        report: json(run.report as string),
        later: JSON.parse(later),
        summary: JSON.parse(summary),
        judge: lines(readFileSync(`${judge}.full.jsonl`, "utf8"))[0],
        markdown: readFileSync(`${judge}.md`, "utf8"),
      };
    }),
  );
  const out = (batch as SeedRun).trajectory;
  const judge = join((batch as SeedRun).dir, "judge");
  const [summaries] = await Promise.all([
    ok(["export", out, "--format", "summary"]),
    ok(["export", out, "--format", "judge", "-o", judge]),
  ]);
  const judges = lines(readFileSync(`${judge}.full.jsonl`, "utf8"));
  const trajectories = Object.fromEntries(
    judges.map((record: Json) => [record.id, json(join(out, record.id, `${record.id}.traj.json`))]),
  );
  return {
    runs,
    batch: {
      run: batch as SeedRun,
      summaries: lines(summaries),
      judges,
      markdown: readFileSync(`${judge}.md`, "utf8"),
      trajectories,
    },
  };
}

/** Whether `value` has a seed's documented type (`int`, `float`, `string`, `bool`, `string[]`, `object`, `array`, `X or null`). */
export function hasType(value: unknown, type: string): boolean {
  const nullable = /(?: or null|\/null| \| null)$/.exec(type);
  if (nullable) return value === null || hasType(value, type.slice(0, nullable.index));
  switch (type) {
    case "int":
      return Number.isInteger(value);
    case "float":
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "string":
      return typeof value === "string";
    case "bool":
    case "boolean":
      return typeof value === "boolean";
    case "string[]":
      return Array.isArray(value) && value.every((item) => typeof item === "string");
    case "object":
      return value !== null && typeof value === "object" && !Array.isArray(value);
    case "array":
      return Array.isArray(value);
    case "unknown":
      return value !== undefined;
    default:
      throw new Error(`no such type in the tables: ${type}`);
  }
}

/** A row of a seed's table: a documented item, its type, its meaning, and how the real outputs show it. */
export interface Row<C> {
  item: string;
  type: string;
  meaning: string;
  /** Checks the item in the outputs (its type and its meaning); absent when `notProduced`. */
  check?: (outputs: C) => void;
  /** Why swerun does not produce this item (also in the README). */
  notProduced?: string;
}

/** A row of a seed's table checked against the seed runs' outputs, and a check of it. */
export type SeedRow = Row<SeedOutputs>;
export type SeedCheck = (outputs: SeedOutputs) => void;

/**
 * A row whose check first runs `holds` (the item is in the outputs, with its type), then the row's own `check`
 * (its meaning), if any.
 */
export function itemRow<C>(
  item: string,
  type: string,
  meaning: string,
  holds: (outputs: C) => void,
  check?: (outputs: C) => void,
): Row<C> {
  return {
    item,
    type,
    meaning,
    check: (outputs) => {
      holds(outputs);
      check?.(outputs);
    },
  };
}
