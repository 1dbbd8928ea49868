import { existsSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { UserError } from "../errors.js";
import { readRun, type StoredRun } from "./store.js";

/**
 * Finds the run a `<ref>` names: a full id, a label (the newest run with it wins), a unique id prefix, a run
 * folder's name, or its path. Anything else is one line listing the candidates.
 */
export function resolveRun(ref: string, runs: StoredRun[]): StoredRun {
  const exact = runs.find((run) => run.id === ref);
  if (exact) return exact;
  const labelled = runs.filter((run) => run.label === ref);
  if (labelled.length > 0) return labelled[0] as StoredRun;
  const prefixed = runs.filter((run) => run.id.startsWith(ref));
  if (prefixed.length === 1) return prefixed[0] as StoredRun;
  if (prefixed.length > 1) {
    throw new UserError(
      `run "${ref}" is ambiguous: ${prefixed.map((run) => run.id + (run.label ? ` (${run.label})` : "")).join(", ")}`,
    );
  }
  const named = runs.filter((run) => basename(run.dir) === ref);
  if (named.length === 1) return named[0] as StoredRun;
  const path = resolve(ref);
  if (existsSync(path) && statSync(path).isDirectory()) {
    const run = runs.find((candidate) => candidate.dir === path) ?? readRun(path);
    if (run) return run;
  }
  const known = runs.slice(0, 10).map((run) => run.id + (run.label ? ` (${run.label})` : ""));
  throw new UserError(
    `no run "${ref}"${known.length > 0 ? `; known runs: ${known.join(", ")}${runs.length > 10 ? ", ..." : ""}` : " (no runs found)"}`,
  );
}
