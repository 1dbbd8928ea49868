import { join, resolve } from "node:path";
import { UserError } from "../errors.js";
import { registerKnownKeys } from "../models/known-keys.js";
import { contextLengthOf } from "../report/context-length.js";
import { trajectoryInputs } from "../report/inputs.js";
import { readRunFacts } from "../report/read-run.js";
import { buildReport, reportText } from "../report/swival-report.js";
import { checkOutputDir, checkOutputFile } from "../run/output.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { writeOutput } from "../util/output-file.js";
import { redact } from "../util/secrets.js";

/** `swerun report` flags, as cac hands them over. */
export interface ReportFlags {
  output?: string;
  outDir?: string;
}

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
      writeFileAtomic(join(resolve(flags.outDir), `${id}.report.json`), [text]);
    } else {
      process.stdout.write(text);
    }
    count += 1;
  }
  if (flags.outDir) process.stderr.write(`wrote ${count} reports to ${resolve(flags.outDir)}\n`);
  return 0;
}
