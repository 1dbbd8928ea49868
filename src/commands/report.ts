import { resolve } from "node:path";
import { UserError } from "../errors.js";
import { contextLengthOf } from "../facts/context-length.js";
import { trajectoryInputs } from "../facts/inputs.js";
import { readRunFacts } from "../facts/read-run.js";
import { buildReport, reportText } from "../facts/report-json.js";
import { registerKnownKeys } from "../models/known-keys.js";
import { checkOutputDir, checkOutputFile } from "../run/output.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { writeOutput } from "../util/output-file.js";
import { ID_MAX_BYTES, nameProblem, pathInside, shownName } from "../util/safe-path.js";
import { redact } from "../util/secrets.js";
import type { FlagsOf } from "./options.js";

/** `swerun report` flags (commands/options.ts). */
export type ReportFlags = FlagsOf<"report">;

/** Context windows already looked up, by model (see `contextLengthOf`). */
const contextLengths = new Map<string, Promise<number | null>>();

/** The report of one trajectory file as written (JSON, secrets redacted), and the run's id. */
export async function reportOfFile(path: string): Promise<{ id: string; text: string }> {
  const facts = readRunFacts(path);
  const contextLength = await contextLengthOf(facts, contextLengths);
  return { id: facts.id, text: redact(reportText(buildReport(facts, { contextLength }))) };
}

/**
 * `swerun report <trajectories or run folders...>`: the swival-shaped report of each run. `-o` writes
 * the one report to a file; `--out-dir` writes `<id>.report.json` per trajectory; otherwise the reports
 * go to standard output one after the other (a stream `jq` reads).
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
  let count = 0;
  for (const input of trajectoryInputs(paths)) {
    const { id, text } = await reportOfFile(input.path);
    if (flags.outDir) {
      const problem = nameProblem(id, ID_MAX_BYTES);
      if (problem)
        throw new UserError(
          `${input.path}: its instance id ${shownName(id)} cannot name a report file (${problem})`,
        );
      writeFileAtomic(pathInside(resolve(flags.outDir), `${id}.report.json`), [text]);
    } else {
      process.stdout.write(text);
    }
    count += 1;
  }
  if (flags.outDir) process.stderr.write(`wrote ${count} reports to ${resolve(flags.outDir)}\n`);
  return 0;
}
