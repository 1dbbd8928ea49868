import { rmSync } from "node:fs";
import { ask, stdinIsTerminal } from "../console/prompt.js";
import { UserError } from "../errors.js";
import { readableRunJson, runJsonPath, updateRunJson } from "../formats/run-json.js";
import { compareRuns } from "../tracking/compare.js";
import { compareText } from "../tracking/compare-text.js";
import { checkLabel } from "../tracking/label.js";
import { resolveRun } from "../tracking/ref.js";
import { mergeShardRuns } from "../tracking/shards.js";
import { listRuns, runsDir, type StoredRun } from "../tracking/store.js";
import { colorsFor } from "../tracking/terminal-layout.js";
import { listJson, listText, showJson, showText } from "../tracking/terminal-text.js";
import { printable, printableLine } from "../util/printable.js";
import type { FlagsOf } from "./options.js";

/** `swerun runs` flags (commands/options.ts). */
export type RunsFlags = FlagsOf<"runs">;

const USAGE =
  "usage: swerun runs list | show <ref> | compare <ref1> <ref2> | label <ref> <label> | delete <ref>";

function need(args: string[], count: number, what: string): string[] {
  if (args.length !== count) throw new UserError(`swerun runs ${what}: ${USAGE}`);
  return args;
}

const print = (text: string) => process.stdout.write(`${text}\n`);

/** `swerun runs <action>`: list, show, compare, label and delete the runs under the runs folder. */
export async function runsCommand(
  action: string | undefined,
  args: string[],
  flags: RunsFlags,
): Promise<number> {
  const found = listRuns(runsDir(flags.dir));
  const runs = flags.mergeShards ? mergeShardRuns(found) : found;
  // A run.json that cannot be read is said, not passed off as an imported folder.
  for (const run of found)
    if (run.unreadable)
      process.stderr.write(
        `${printable(`swerun: ${runJsonPath(run.dir)} could not be read (${run.unreadable}); the run is shown from its trajectories`)}\n`,
      );
  const json = (value: unknown) => print(JSON.stringify(value, null, 2));
  const colors = colorsFor(Boolean(process.stdout.isTTY));
  switch (action ?? "list") {
    case "list":
    case "ls":
      need(args, 0, "list");
      if (flags.json) json(listJson(runs));
      else print(listText(runs, colors));
      return 0;
    case "show": {
      const run = resolveRun(need(args, 1, "show")[0] as string, runs);
      if (flags.json) json(showJson(run));
      else print(showText(run, colors));
      return 0;
    }
    case "compare": {
      const [first, second] = need(args, 2, "compare") as [string, string];
      const comparison = compareRuns(resolveRun(first, runs), resolveRun(second, runs));
      if (flags.json) json(comparison);
      else print(compareText(comparison, colors));
      return 0;
    }
    case "label":
      return labelRun(need(args, 2, "label") as [string, string], found);
    case "delete":
    case "rm":
      return deleteRun(need(args, 1, "delete")[0] as string, found, Boolean(flags.force));
    default:
      throw new UserError(`swerun runs: unknown action "${action}"; ${USAGE}`);
  }
}

/** `swerun runs label <ref> <label>`: a run swerun made and that has ended gets the label in its run.json. */
function labelRun([ref, label]: [string, string], runs: StoredRun[]): number {
  checkLabel(label, "label");
  const run = resolveRun(ref, runs);
  if (run.imported)
    throw new UserError(`${run.id} was not made by swerun (no run.json) and cannot be labelled`);
  if (run.state === "running") throw new UserError(`${run.id} is running; label it when it ends`);
  const path = runJsonPath(run.dir);
  updateRunJson(path, (onDisk) => {
    const record = readableRunJson(path, onDisk);
    if (!record) throw new UserError(`${path}: no such file (the run's folder changed since it was read)`);
    return { ...record, label };
  });
  print(`${printableLine(run.id)}: label ${JSON.stringify(label)}`);
  return 0;
}

/** `swerun runs delete <ref>`: removes a run's folder once confirmed on the terminal (or `--force`). */
async function deleteRun(ref: string, runs: StoredRun[], force: boolean): Promise<number> {
  const run = resolveRun(ref, runs);
  if (run.state === "running")
    throw new UserError(`${run.id} is running (its lock is held); stop it before deleting it`);
  if (!force) {
    if (!stdinIsTerminal()) throw new UserError(`deleting ${run.id} needs a terminal to confirm, or --force`);
    const answer = await ask(
      `Delete run ${run.id}${run.label ? ` (${run.label})` : ""} and its folder ${run.dir}? [y/N] `,
    );
    if (!/^y(es)?$/i.test(answer.trim())) {
      print("Not deleted.");
      return 1;
    }
  }
  rmSync(run.dir, { recursive: true, force: true });
  print(`Deleted ${run.id} (${run.dir}).`);
  return 0;
}
