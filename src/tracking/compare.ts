import { roundUsd } from "../facts/figures.js";
import type { RunCase } from "../formats/run-json.js";
import { isCredentialName, REDACTED, redact } from "../util/secrets.js";
import type { StoredRun } from "./store.js";

/** One config key that differs between two runs: its dotted path, and its value in each (null: not set). */
export interface ConfigChange {
  field: string;
  old: unknown;
  new: unknown;
}

/** An instance that resolved (or, without grades, submitted) in one run and not in the other. */
export interface Flip {
  instance_id: string;
  kind: "resolved" | "submitted";
  /** `gained`: only the second run has it; `lost`: only the first. */
  direction: "gained" | "lost";
}

export interface CaseSide {
  exit_status: string;
  submitted: boolean;
  resolved: boolean | null;
  /** sniffbench's grade (10 resolved, 0 not), null when not graded. */
  grade: number | null;
  totalTokens: number;
  /** sniffbench's 4-decimal cost of the case. */
  costUsd: number;
  /** The case's cost unrounded (what the summary sums). */
  cost: number;
  steps: number;
}

export interface CaseComparison {
  instance_id: string;
  a: CaseSide;
  b: CaseSide;
  /** Signed percentage change from a to b; null when a is 0. */
  tokensChangePct: number | null;
  costChangePct: number | null;
}

export interface SideSummary {
  cases: number;
  submitted: number;
  resolved: number | null;
  resolveRate: number | null;
  /** Average grade over the cases graded in both runs (sniffbench's), null when none is. */
  averageGrade: number | null;
  totalTokens: number;
  costUsd: number;
  steps: number;
}

export interface RunComparison {
  runs: {
    id: string;
    label: string | null;
    createdAt: string;
    agent: string;
    version: string | null;
    model: string;
    state: string;
    cases: number;
  }[];
  configChanges: ConfigChange[];
  flips: Flip[];
  cases: CaseComparison[];
  summary: { casesCompared: number; a: SideSummary; b: SideSummary };
  onlyInA: string[];
  onlyInB: string[];
}

/** Nested objects as `a.b.c` keys; a key that names a credential keeps its place with its value redacted. */
function flatten(value: unknown, prefix: string, out: Record<string, unknown>): Record<string, unknown> {
  if (value && typeof value === "object" && !Array.isArray(value)) {
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      const path = prefix ? `${prefix}.${key}` : key;
      if (isCredentialName(key) && inner !== null && typeof inner !== "object") out[path] = REDACTED;
      else flatten(inner, path, out);
    }
  } else out[prefix] = typeof value === "string" ? redact(value) : value;
  return out;
}

/**
 * What two runs are compared on, key by key: the resolved config run.json records (`model.model_kwargs.temperature`,
 * `agent.step_limit`, ...), swerun's version and the instance selection (`dataset.*`). A run without a recorded
 * config (imported, or older) is compared on its agent snapshot.
 */
function snapshotOf(run: StoredRun): Record<string, unknown> {
  const config = run.record.config;
  if (config && typeof config === "object" && !Array.isArray(config)) {
    return flatten(
      {
        ...(config as Record<string, unknown>),
        swerun_version: run.agent?.version ?? null,
        dataset: run.dataset ?? {},
      },
      "",
      {},
    );
  }
  const agent = run.agent ? { ...run.agent, version: run.agent.version } : { model: run.model };
  return flatten({ agent, dataset: run.dataset ?? {} }, "", {});
}

/** The config keys whose values differ between two runs, sorted by path. */
export function configChanges(a: StoredRun, b: StoredRun): ConfigChange[] {
  const left = snapshotOf(a);
  const right = snapshotOf(b);
  const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort();
  return keys
    .filter((key) => JSON.stringify(left[key]) !== JSON.stringify(right[key]))
    .map((key) => ({ field: key, old: left[key] ?? null, new: right[key] ?? null }));
}

const side = (c: RunCase): CaseSide => ({
  exit_status: c.exit_status,
  submitted: c.submitted,
  resolved: typeof c.resolved === "boolean" ? c.resolved : null,
  grade: typeof c.grade === "number" ? c.grade : null,
  totalTokens: c.behaviorMetrics.totalTokens,
  costUsd: c.behaviorMetrics.costUsd,
  cost: c.cost ?? c.behaviorMetrics.costUsd,
  steps: c.steps,
});

const pct = (a: number, b: number) => (a === 0 ? null : Math.round(((b - a) / a) * 1000) / 10);

function summarize(cases: CaseSide[], bothGraded: boolean[]): SideSummary {
  const graded = cases.filter((c) => c.resolved !== null);
  const resolved = graded.filter((c) => c.resolved).length;
  const grades = cases.filter((_, index) => bothGraded[index]).map((c) => c.grade ?? 0);
  return {
    cases: cases.length,
    submitted: cases.filter((c) => c.submitted).length,
    resolved: graded.length > 0 ? resolved : null,
    resolveRate: graded.length > 0 ? Math.round((resolved / cases.length) * 1000) / 10 : null,
    averageGrade: grades.length > 0 ? grades.reduce((sum, grade) => sum + grade, 0) / grades.length : null,
    totalTokens: cases.reduce((sum, c) => sum + c.totalTokens, 0),
    // Summed unrounded, rounded once (as run.json's totals and `runs show`), not a sum of 4-decimal costs.
    costUsd: roundUsd(cases.reduce((sum, c) => sum + c.cost, 0)),
    steps: cases.reduce((sum, c) => sum + c.steps, 0),
  };
}

/** How a common instance did in each run. */
function caseComparison(id: string, a: StoredRun, b: StoredRun): CaseComparison {
  const left = side(a.cases[id] as RunCase);
  const right = side(b.cases[id] as RunCase);
  return {
    instance_id: id,
    a: left,
    b: right,
    tokensChangePct: pct(left.totalTokens, right.totalTokens),
    costChangePct: pct(left.costUsd, right.costUsd),
  };
}

/** An instance resolved in one run only, or else submitted in one run only; none when both did the same. */
function flipOf(c: CaseComparison): Flip | undefined {
  if (c.a.resolved !== null && c.b.resolved !== null && c.a.resolved !== c.b.resolved) {
    return { instance_id: c.instance_id, kind: "resolved", direction: c.b.resolved ? "gained" : "lost" };
  }
  if (c.a.submitted !== c.b.submitted) {
    return { instance_id: c.instance_id, kind: "submitted", direction: c.b.submitted ? "gained" : "lost" };
  }
  return undefined;
}

/** What the comparison shows of a run. */
function runInfo(run: StoredRun): RunComparison["runs"][0] {
  return {
    id: run.id,
    label: run.label,
    createdAt: run.created,
    agent: run.agent?.name ?? "swerun",
    version: run.agent?.version ?? null,
    model: run.model,
    state: run.state,
    cases: Object.keys(run.cases).length,
  };
}

/** The instances of `a` that `b` does not have, sorted. */
function onlyIn(a: StoredRun, b: StoredRun): string[] {
  return Object.keys(a.cases)
    .filter((id) => !(id in b.cases))
    .sort();
}

/** Compares two runs over their common instances, the flips first. */
export function compareRuns(a: StoredRun, b: StoredRun): RunComparison {
  const ids = Object.keys(a.cases)
    .filter((id) => id in b.cases)
    .sort();
  const cases = ids.map((id) => caseComparison(id, a, b));
  const flips = cases.map(flipOf).filter((flip): flip is Flip => flip !== undefined);
  const flipped = new Set(flips.map((flip) => flip.instance_id));
  cases.sort((x, y) => Number(flipped.has(y.instance_id)) - Number(flipped.has(x.instance_id)));
  const bothGraded = cases.map((c) => c.a.grade !== null && c.b.grade !== null);
  return {
    runs: [runInfo(a), runInfo(b)],
    configChanges: configChanges(a, b),
    flips,
    cases,
    summary: {
      casesCompared: ids.length,
      a: summarize(
        cases.map((c) => c.a),
        bothGraded,
      ),
      b: summarize(
        cases.map((c) => c.b),
        bothGraded,
      ),
    },
    onlyInA: onlyIn(a, b),
    onlyInB: onlyIn(b, a),
  };
}
