import { folderTrajectories } from "../trajectory/folder.js";
import { type FolderVerdicts, folderVerdicts, instanceVerdict } from "./folder-verdicts.js";
import { readRunFacts } from "./read-run.js";
import type { RunFacts, RunTotals } from "./run-facts.js";
import { runTotals } from "./run-totals.js";

/** An instance's facts with its verdict from its run folder's verdicts. */
export function readInstanceFacts(path: string, verdicts: FolderVerdicts | undefined): RunFacts {
  const facts = readRunFacts(path);
  if (verdicts) facts.verdict = instanceVerdict(verdicts, facts.id, facts);
  return facts;
}

/** Attaches the verdict a folder records to facts already read. */
export function withVerdict(facts: RunFacts, verdicts: FolderVerdicts): RunFacts {
  return { ...facts, verdict: instanceVerdict(verdicts, facts.id, facts) };
}

/** The facts of a run folder: each finished instance's (verdicts attached) and their totals. */
export function folderFacts(
  dir: string,
  record?: Record<string, unknown>,
): { instances: RunFacts[]; totals: RunTotals; verdicts: FolderVerdicts } {
  const verdicts = folderVerdicts(dir, record);
  const instances: RunFacts[] = [];
  for (const found of folderTrajectories(dir)) {
    try {
      instances.push(readInstanceFacts(found.path, verdicts));
    } catch {
      // an unreadable trajectory has no facts
    }
  }
  return { instances, totals: runTotals(instances), verdicts };
}
