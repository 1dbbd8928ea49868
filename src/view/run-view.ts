import { statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { count, seconds, usd } from "../facts/figures.js";
import { FolderFacts } from "../facts/folder-facts.js";
import { evalRunDir, trajectoryInputs } from "../facts/inputs.js";
import type { RunCase } from "../formats/run-json.js";
import { caseFromFacts } from "../tracking/case.js";
import { caseTotals } from "../tracking/metrics.js";
import { looseRun, readRun, type StoredRun } from "../tracking/store.js";
import type { FolderTrajectory } from "../trajectory/folder.js";
import { loadTrajectory } from "../trajectory/reader.js";
import { packDetail } from "./embed.js";
import { instanceDetail } from "./instance-detail.js";
import type { InstanceRow, VerdictView, ViewRun } from "./model.js";
import { readVerdicts } from "./verdicts.js";

/** A run read for the page: its overview, its packed detail records, and its cases (for comparing runs). */
export interface RunView {
  run: ViewRun;
  details: string[];
  cases: Record<string, RunCase>;
  stored: StoredRun;
}

/** Packed details of trajectories already read, by path; reused while a file and its verdict do not change. */
export type DetailCache = Map<string, { stamp: string; id: string; case: RunCase; packed: string }>;

function readOne(
  path: string,
  verdictFor: (id: string) => VerdictView | undefined,
  folder: FolderFacts,
  cache: DetailCache | undefined,
): { id: string; case: RunCase; packed: string; verdict: VerdictView | undefined } {
  const stat = statSync(path);
  const fileStamp = `${stat.mtimeMs}:${stat.size}`;
  const stampOf = (id: string, verdict: VerdictView | undefined) =>
    `${fileStamp}|${JSON.stringify([verdict ?? null, folder.verdicts.byId.get(id) ?? null, folder.verdicts.evaluated])}`;
  const cached = cache?.get(path);
  if (cached?.stamp.startsWith(`${fileStamp}|`)) {
    const verdict = verdictFor(cached.id);
    if (cached.stamp === stampOf(cached.id, verdict)) return { ...cached, verdict };
  }
  const trajectory = loadTrajectory(path);
  const facts = folder.factsOf(trajectory);
  const verdict = verdictFor(facts.id);
  const entry = {
    stamp: stampOf(facts.id, verdict),
    id: facts.id,
    case: caseFromFacts(facts),
    packed: packDetail(instanceDetail(trajectory, verdict ?? null, facts)),
  };
  cache?.set(path, entry);
  return { ...entry, verdict };
}

function settingsOf(stored: StoredRun): Array<[string, string]> {
  const record = stored.record;
  const agent = stored.agent;
  const dataset = stored.dataset;
  const pairs: Array<[string, unknown]> = [
    ["Run", stored.id],
    ["Label", stored.label],
    ["Model", stored.model || null],
    ["Model class", agent?.model_class],
    ["Environment", agent?.environment_class],
    ["Dataset", dataset ? `${dataset.subset} (${dataset.split})` : record.subset],
    ["Slice", dataset?.slice],
    ["Filter", dataset?.filter],
    ["Shard", dataset?.shard],
    ["Step limit", agent?.step_limit ? agent.step_limit : agent ? "none" : null],
    ["Cost limit", agent?.cost_limit ? usd(agent.cost_limit) : agent ? "none" : null],
    [
      "Wall-time limit",
      agent?.wall_time_limit_seconds ? seconds(agent.wall_time_limit_seconds) : agent ? "none" : null,
    ],
    ["Started", stored.created || null],
    ["Ended", stored.ended],
    ["swerun version", record.swerun_version],
    ["Config sha256", agent?.config_sha256?.slice(0, 12)],
  ];
  return pairs
    .filter(([, value]) => value !== null && value !== undefined && value !== "")
    .map(([label, value]) => [label, String(value)]);
}

/**
 * The run's totals: the counts of its rows, and the figures of its cases summed once (`caseTotals`, as
 * `swerun runs` and run.json sum them), printed as every output prints them.
 */
function totalsOf(
  rows: InstanceRow[],
  cases: Record<string, RunCase>,
  expected: number | null,
): Array<[string, string]> {
  const totals = caseTotals(Object.values(cases));
  const graded = rows.filter((row) => row.resolved !== null);
  const finished = rows.filter((row) => row.exit_status !== "running").length;
  const pairs: Array<[string, string]> = [
    [
      "Instances",
      expected !== null && expected !== rows.length ? `${finished} of ${expected}` : `${finished}`,
    ],
    ["Submitted", `${rows.filter((row) => row.submitted).length}`],
    ["Empty patches", `${rows.filter((row) => row.empty_patch && row.exit_status !== "running").length}`],
    [
      "Resolved",
      graded.length > 0
        ? `${graded.filter((row) => row.resolved).length} of ${graded.length} evaluated`
        : "not evaluated",
    ],
    ["Cost", usd(totals.costUsd)],
    ["Tokens", count(totals.totalTokens)],
    ["Steps", count(totals.steps)],
    ["Format errors", count(totals.formatErrors)],
    ["Timeouts", count(totals.timeouts)],
    ["Wall time (sum)", seconds(totals.wallTimeSeconds)],
  ];
  if (rows.some((row) => row.exit_status === "running"))
    pairs.splice(1, 0, ["Running", `${rows.length - finished}`]);
  return pairs;
}

function rowOf(id: string, runCase: RunCase, detail: number | null): InstanceRow {
  return {
    id,
    exit_status: runCase.exit_status,
    resolved: typeof runCase.resolved === "boolean" ? runCase.resolved : null,
    verdict: runCase.verdict ?? "not_evaluated",
    submitted: runCase.submitted,
    empty_patch: runCase.empty_patch ?? runCase.patch_lines === 0,
    steps: runCase.steps,
    cost: runCase.cost,
    tokens: runCase.behaviorMetrics.totalTokens,
    wall_s: runCase.duration_s,
    patch_lines: runCase.patch_lines,
    format_errors: runCase.behaviorMetrics.formatErrors,
    timeouts: runCase.behaviorMetrics.timeouts,
    detail,
  };
}

interface Collected {
  rows: InstanceRow[];
  details: string[];
  cases: Record<string, RunCase>;
}

/**
 * The rows of a run: each trajectory's facts (its case, with the verdict its folder records), else the case
 * run.json recorded for an instance whose trajectory is gone.
 */
function collect(
  files: Array<FolderTrajectory & { verdicts: Map<string, VerdictView>; folder: FolderFacts }>,
  recorded: Record<string, RunCase>,
  cache: DetailCache | undefined,
): Collected {
  const rows: InstanceRow[] = [];
  const details: string[] = [];
  const cases: Record<string, RunCase> = {};
  for (const file of files) {
    const read = readOne(file.path, (id) => file.verdicts.get(id), file.folder, cache);
    if (read.id in cases) continue;
    const host = recorded[read.id]?.host;
    const runCase: RunCase = file.running
      ? { ...read.case, exit_status: "running" }
      : { ...read.case, ...(host ? { host } : {}) };
    details.push(read.packed);
    rows.push(rowOf(read.id, runCase, details.length - 1));
    cases[read.id] = runCase;
  }
  for (const [id, runCase] of Object.entries(recorded)) {
    if (id in cases) continue;
    rows.push(rowOf(id, runCase, null));
    cases[id] = runCase;
  }
  return { rows, details, cases };
}

/**
 * A run folder: a batch with run.json (or a mini-swe-agent folder with preds.json), whose trajectories are
 * `<id>/<id>.traj.json` (`.partial` while running), else any folder holding `.traj.json` files.
 */
export function readRunFolder(dir: string, cache?: DetailCache): RunView {
  const verdicts = readVerdicts(dir);
  const stored = readRun(dir);
  const folder = new FolderFacts(dir, stored?.record);
  if (!stored) {
    const files = [...trajectoryInputs([dir])].map((input) => ({
      path: input.path,
      running: false,
      verdicts,
      folder,
    }));
    const { rows, details, cases } = collect(files, {}, cache);
    const run: ViewRun = {
      name: basename(dir),
      path: dir,
      state: "trajectories",
      expected: null,
      settings: [["Folder", dir]],
      totals: totalsOf(rows, cases, null),
      rows,
    };
    return { run, details, cases, stored: looseRun(dir, basename(dir), cases) };
  }
  const files = folder.trajectories(true).map((found) => ({
    ...found,
    running: found.running,
    verdicts,
    folder,
  }));
  const { rows, details, cases } = collect(files, stored.imported ? {} : stored.cases, cache);
  const expected = stored.imported ? null : stored.total;
  const run: ViewRun = {
    name: stored.label ?? basename(dir),
    path: dir,
    state: stored.state,
    expected,
    settings: settingsOf(stored),
    totals: totalsOf(rows, cases, expected),
    rows,
  };
  return { run, details, cases, stored: { ...stored, cases } };
}

/** Trajectory files given one by one; evaluation verdicts come from their run folder when it has one. */
export function readTrajectoryFiles(paths: string[], cache?: DetailCache): RunView {
  const files = paths.map((path) => {
    const runDir = evalRunDir(path);
    return {
      path,
      running: path.endsWith(".partial"),
      verdicts: readVerdicts(runDir),
      folder: new FolderFacts(runDir),
    };
  });
  const { rows, details, cases } = collect(files, {}, cache);
  const name = paths.length === 1 ? basename(paths[0] ?? "") : `${paths.length} trajectories`;
  const run: ViewRun = {
    name,
    path: paths.length === 1 ? (paths[0] ?? "") : dirname(paths[0] ?? ""),
    state: "trajectories",
    expected: null,
    settings: paths.length === 1 ? [["File", paths[0] ?? ""]] : [["Files", `${paths.length}`]],
    totals: totalsOf(rows, cases, null),
    rows,
  };
  return { run, details, cases, stored: looseRun(run.path, name, cases) };
}
