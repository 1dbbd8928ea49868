import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { basename, join, resolve } from "node:path";
import { FolderFacts } from "../facts/folder-facts.js";
import { type FolderVerdicts, instanceVerdict } from "../facts/folder-verdicts.js";
import {
  type AgentSnapshot,
  type BehaviorMetrics,
  CASE_VERDICT_KEYS,
  type DatasetSelection,
  type RunCase,
  readRunJson,
  runJsonPath,
} from "../formats/run-json.js";
import { folderTrajectories } from "../trajectory/folder.js";
import { readTrajectoryInfo } from "../trajectory/reader.js";
import { processAlive } from "../util/process-alive.js";
import { caseFromFacts, caseVerdict } from "./case.js";
import { caseTotals } from "./metrics.js";

/** complete: ended normally; partial: stopped by Ctrl-C or a crash; running: its lock is held by a live process. */
export type RunState = "complete" | "partial" | "running";

/** A run as `swerun runs` sees it: from its `run.json`, or imported from a folder of trajectories. */
export interface StoredRun {
  id: string;
  label: string | null;
  dir: string;
  created: string;
  ended: string | null;
  model: string;
  state: RunState;
  imported: boolean;
  /** Instances selected for the run (the case count when unknown). */
  total: number;
  cases: Record<string, RunCase>;
  totals: BehaviorMetrics;
  agent: AgentSnapshot | null;
  dataset: DatasetSelection | null;
  /** The run.json as read (empty for imported folders). */
  record: Record<string, unknown>;
  /** Why the folder's run.json could not be read (truncated, not JSON, not a run record), when it could not. */
  unreadable?: string;
}

const obj = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/** The default store: `SWERUN_RUNS_DIR`, else `runs/`. */
export function runsDir(dir?: string): string {
  return resolve(dir ?? process.env.SWERUN_RUNS_DIR ?? "runs");
}

/** Trajectories of a run folder (finished ones), as every reader of run folders finds them. */
const trajectoryFiles = (dir: string) => folderTrajectories(dir).map((found) => found.path);

/** Cases read from the trajectories' facts (imported folders, and runs recorded before `cases` existed). */
function casesFromTrajectories(folder: FolderFacts): Record<string, RunCase> {
  const cases: Record<string, RunCase> = {};
  for (const { path } of folder.trajectories()) {
    try {
      const facts = folder.read(path);
      cases[facts.id] = caseFromFacts(facts);
    } catch {
      // an unreadable trajectory is no case
    }
  }
  return cases;
}

/**
 * A case as swerun records it now: cases recorded before `empty_patch` existed said `submitted` for a
 * non-empty patch; now `submitted` is the exit status Submitted and `empty_patch` the patch.
 */
function currentCase(recorded: RunCase): RunCase {
  if (typeof recorded.empty_patch === "boolean") return { ...recorded };
  const patch =
    typeof recorded.answer === "string" ? recorded.answer.trim() !== "" : Boolean(recorded.submitted);
  return { ...recorded, submitted: recorded.exit_status === "Submitted", empty_patch: !patch };
}

/**
 * Recorded cases with the verdicts their folder records (run.json's `eval`, the harness's reports), so a
 * case reads the same verdict however it was graded (`swebench --eval`, `swerun eval`, the harness itself).
 */
function withVerdicts(cases: Record<string, RunCase>, verdicts: FolderVerdicts): Record<string, RunCase> {
  const out: Record<string, RunCase> = {};
  for (const [id, recorded] of Object.entries(cases)) {
    const runCase = currentCase(recorded);
    const submission =
      typeof runCase.answer === "string" ? runCase.answer : runCase.empty_patch ? "" : "(patch)";
    const verdict = instanceVerdict(verdicts, id, { exit_status: runCase.exit_status ?? "", submission });
    for (const key of CASE_VERDICT_KEYS) delete runCase[key];
    out[id] = { ...runCase, ...caseVerdict(verdict) };
  }
  return out;
}

/** Whether the folder's `.swerun.lock` is held by a live process on this host. */
export function lockHeld(dir: string): boolean {
  const lock = obj(readJson(join(dir, ".swerun.lock")));
  if (!existsSync(join(dir, ".swerun.lock"))) return false;
  if (lock.host !== undefined && lock.host !== hostname()) return true;
  return typeof lock.pid === "number" ? processAlive(lock.pid) : true;
}

function fromRecord(dir: string, record: Record<string, unknown>): StoredRun {
  const recorded = obj(record.cases);
  const folder = new FolderFacts(dir, record);
  const cases =
    Object.keys(recorded).length > 0 || record.cases !== undefined
      ? withVerdicts(recorded as Record<string, RunCase>, folder.verdicts)
      : casesFromTrajectories(folder);
  const status = String(record.status ?? "");
  const state: RunState = lockHeld(dir) ? "running" : status === "finished" ? "complete" : "partial";
  const agent = record.agent ? (obj(record.agent) as unknown as AgentSnapshot) : null;
  return {
    id: String(record.id ?? record.run_id ?? basename(dir)),
    label: typeof record.label === "string" ? record.label : null,
    dir,
    created: String(record.createdAt ?? record.started_at ?? ""),
    ended: typeof record.ended_at === "string" ? record.ended_at : null,
    model: String(record.model ?? agent?.model ?? ""),
    state,
    imported: false,
    total: typeof record.instances === "number" ? record.instances : Object.keys(cases).length,
    cases,
    totals: caseTotals(Object.values(cases)),
    agent,
    dataset: record.dataset ? (obj(record.dataset) as unknown as DatasetSelection) : null,
    record,
  };
}

/** A folder mini-swe-agent wrote (preds.json and trajectories, no run.json). */
function imported(dir: string): StoredRun {
  const cases = casesFromTrajectories(new FolderFacts(dir, {}));
  const preds = obj(readJson(join(dir, "preds.json")));
  const first = obj(Object.values(preds)[0]);
  let model = typeof first.model_name_or_path === "string" ? first.model_name_or_path : "";
  if (!model) {
    const file = trajectoryFiles(dir)[0];
    model = file ? String(obj(obj(readTrajectoryInfo(file)?.config).model).model_name ?? "") : "";
  }
  const created = statSync(
    existsSync(join(dir, "preds.json")) ? join(dir, "preds.json") : dir,
  ).mtime.toISOString();
  return {
    ...looseRun(dir, basename(dir), cases),
    created,
    ended: created,
    model,
    total: Math.max(Object.keys(cases).length, Object.keys(preds).length),
  };
}

/** A run record for trajectories without run.json: only what the cases say (enough to list and compare runs). */
export function looseRun(dir: string, id: string, cases: Record<string, RunCase>): StoredRun {
  return {
    id,
    label: null,
    dir,
    created: "",
    ended: null,
    model: "",
    state: "complete",
    imported: true,
    total: Object.keys(cases).length,
    cases,
    totals: caseTotals(Object.values(cases)),
    agent: null,
    dataset: null,
    record: {},
  };
}

/** Reads one run folder, or undefined when it is not one. */
export function readRun(dir: string): StoredRun | undefined {
  const onDisk = readRunJson(runJsonPath(dir));
  if (onDisk.state === "read" && "run_id" in onDisk.record) return fromRecord(dir, onDisk.record);
  // Why a run.json that exists is not a readable run record.
  const unreadable =
    onDisk.state === "unreadable"
      ? onDisk.problem
      : onDisk.state === "read"
        ? "not a run record (no run_id)"
        : "";
  const withProblem = (run: StoredRun) => (unreadable ? { ...run, unreadable } : run);
  if (existsSync(join(dir, "preds.json")) && trajectoryFiles(dir).length > 0)
    return withProblem(imported(dir));
  if (unreadable)
    return withProblem(looseRun(dir, basename(dir), casesFromTrajectories(new FolderFacts(dir, {}))));
  return undefined;
}

/** Every run under `root`, recursively (a run folder's own sub-folders are not searched), newest first. */
export function listRuns(root: string): StoredRun[] {
  const runs: StoredRun[] = [];
  const visit = (dir: string, depth: number) => {
    const run = readRun(dir);
    if (run) {
      runs.push(run);
      return;
    }
    if (depth > 6) return;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !entry.name.startsWith(".") && entry.name !== "node_modules")
        visit(join(dir, entry.name), depth + 1);
    }
  };
  if (existsSync(root)) visit(root, 0);
  return runs.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
}
