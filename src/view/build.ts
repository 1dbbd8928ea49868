import { existsSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { UserError } from "../errors.js";
import { compareRuns } from "../tracking/compare.js";
import { swerunVersion } from "../util/package-root.js";
import type { ViewCompare, ViewPage } from "./model.js";
import { pageChunks } from "./page.js";
import { type DetailCache, type RunView, readRunFolder, readTrajectoryFiles } from "./run-view.js";

/** What `swerun view` was asked to show, decided from its paths. */
export interface ViewTarget {
  mode: ViewPage["mode"];
  paths: string[];
  /** Where the page goes when -o is not given; null when it must be given. */
  defaultOutput: string | null;
}

const stem = (path: string) => basename(path).replace(/\.traj\.json(?:\.partial)?$|\.json$/, "");

/** One run folder, two run folders (compared), or trajectory files; anything else is a UserError. */
export function viewTarget(given: string[]): ViewTarget {
  if (given.length === 0)
    throw new UserError("give a run folder, two run folders to compare, or .traj.json files");
  const paths = given.map((path) => {
    const full = resolve(path);
    if (!existsSync(full)) throw new UserError(`${path}: no such file or folder`);
    return full;
  });
  const folders = paths.filter((path) => statSync(path).isDirectory());
  if (folders.length === 0) {
    const only = paths.length === 1 ? paths[0] : undefined;
    return {
      mode: "trajectories",
      paths,
      defaultOutput: only ? join(dirname(only), `${stem(only)}.html`) : null,
    };
  }
  if (folders.length !== paths.length) throw new UserError("give run folders or trajectory files, not both");
  if (folders.length > 2)
    throw new UserError(`${folders.length} run folders given: view shows one run, or two side by side`);
  const [a, b] = folders as [string, string | undefined];
  if (!b) return { mode: "run", paths, defaultOutput: join(a, "index.html") };
  return { mode: "compare", paths, defaultOutput: resolve(`compare-${basename(a)}-${basename(b)}.html`) };
}

function compareOf(a: RunView, b: RunView): ViewCompare {
  const comparison = compareRuns(a.stored, b.stored);
  const indexA = new Map(a.run.rows.map((row, index) => [row.id, index]));
  const indexB = new Map(b.run.rows.map((row, index) => [row.id, index]));
  const flips = new Map(comparison.flips.map((flip) => [flip.instance_id, flip]));
  const common = comparison.cases.map((c) => c.instance_id);
  const rows: ViewCompare["rows"] = [...common, ...comparison.onlyInA, ...comparison.onlyInB].map((id) => {
    const flip = flips.get(id);
    return {
      id,
      a: indexA.get(id) ?? null,
      b: indexB.get(id) ?? null,
      flip: flip?.direction ?? null,
      flip_kind: flip?.kind ?? null,
    };
  });
  const show = (value: unknown) => (value === null || value === undefined ? "—" : JSON.stringify(value));
  return {
    rows,
    config_changes: comparison.configChanges.map((change) => ({
      field: change.field,
      old: show(change.old),
      new: show(change.new),
    })),
  };
}

/** Reads what the target names and returns the page as chunks, with a one-line summary of what it shows. */
export function buildView(target: ViewTarget, cache?: DetailCache): { chunks: string[]; summary: string } {
  const views =
    target.mode === "trajectories"
      ? [readTrajectoryFiles(target.paths, cache)]
      : target.paths.map((path) => readRunFolder(path, cache));
  const [first, second] = views as [RunView, RunView | undefined];
  const page: ViewPage = {
    format: "swerun-view-1",
    title: second ? `${first.run.name} vs ${second.run.name}` : first.run.name,
    generated_at: new Date().toISOString(),
    swerun_version: swerunVersion(),
    mode: target.mode,
    runs: views.map((view) => view.run),
    compare: second ? compareOf(first, second) : null,
  };
  const counts = views
    .map(({ run }) => `${run.rows.length} ${run.rows.length === 1 ? "instance" : "instances"}`)
    .join(" vs ");
  return {
    chunks: pageChunks(
      page,
      views.map((view) => view.details),
    ),
    summary: counts,
  };
}
