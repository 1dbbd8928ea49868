import { statSync } from "node:fs";
import { resolve } from "node:path";
import { UserError } from "../errors.js";
import { trajectoryInputs } from "../facts/inputs.js";
import { type ModelLimits, modelLimitsOf } from "../facts/model-limits.js";
import { readRunFacts } from "../facts/read-run.js";
import { registerKnownKeys } from "../models/known-keys.js";
import { buildReport, type ReportJson, reportText } from "../reports/report-json.js";
import { checkOutputDir, checkOutputFile } from "../run/output.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { writeOutput } from "../util/output-file.js";
import { ID_MAX_BYTES, nameProblem, pathInside, shownName } from "../util/safe-path.js";
import { redact } from "../util/secrets.js";
import type { FlagsOf } from "./options.js";

/** `swerun report` flags (commands/options.ts). */
export type ReportFlags = FlagsOf<"report">;

/** Model limits already looked up, by model (see `modelLimitsOf`). */
const modelLimits = new Map<string, Promise<ModelLimits>>();

/** The report of one trajectory file, and the run's id. */
async function reportOf(path: string): Promise<{ id: string; report: ReportJson }> {
  const facts = readRunFacts(path);
  return { id: facts.id, report: buildReport(facts, await modelLimitsOf(facts, modelLimits)) };
}

/** The report of one trajectory file as written (JSON, indent 2, secrets redacted), and the run's id. */
export async function reportOfFile(path: string): Promise<{ id: string; text: string }> {
  const { id, report } = await reportOf(path);
  return { id, text: redact(reportText(report)) };
}

/** A path that names a folder (a run folder: its reports go out as JSON Lines). */
const isFolder = (path: string) => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/**
 * `swerun report <trajectories or run folders...>`: the swival-shaped report of each run. `-o` writes
 * the one report to a file; `--out-dir` writes `<id>.report.json` per trajectory; otherwise one trajectory
 * file prints its report (JSON, indent 2), and a run folder or several paths print JSON Lines: one report
 * per line.
 */
export async function reportCommand(paths: string[], flags: ReportFlags): Promise<number> {
  if (flags.output && flags.outDir) throw new UserError("give -o/--output or --out-dir, not both");
  const output = flags.output ? checkOutputFile(flags.output, "-o") : undefined;
  if (flags.outDir) checkOutputDir(resolve(flags.outDir), "--out-dir");
  registerKnownKeys();
  if (output) {
    const inputs = [...trajectoryInputs(paths)];
    const [only] = inputs;
    if (!only || inputs.length > 1) {
      throw new UserError(
        `-o writes one report, but ${inputs.length} trajectories were given: use --out-dir`,
      );
    }
    writeOutput(output, [(await reportOfFile(only.path)).text]);
    if (output !== "-") process.stderr.write(`wrote ${output}\n`);
    return 0;
  }
  const lines = paths.length > 1 || paths.some(isFolder);
  let count = 0;
  for (const input of trajectoryInputs(paths)) {
    const { id, report } = await reportOf(input.path);
    if (flags.outDir) {
      const problem = nameProblem(id, ID_MAX_BYTES);
      if (problem)
        throw new UserError(
          `${input.path}: its instance id ${shownName(id)} cannot name a report file (${problem})`,
        );
      writeFileAtomic(pathInside(resolve(flags.outDir), `${id}.report.json`), [redact(reportText(report))]);
    } else {
      process.stdout.write(redact(lines ? `${JSON.stringify(report)}\n` : reportText(report)));
    }
    count += 1;
  }
  if (flags.outDir) process.stderr.write(`wrote ${count} reports to ${resolve(flags.outDir)}\n`);
  return 0;
}
