import { resolve } from "node:path";
import { UserError } from "../errors.js";
import { trajectoryInputs } from "../report/inputs.js";
import { type JudgeRecord, judgeMarkdown, judgeRecord } from "../report/judge.js";
import { readRunFacts } from "../report/read-run.js";
import { summaryResult } from "../report/summary.js";
import { checkOutputFile } from "../run/output.js";
import { AtomicFileStream } from "../util/atomic-stream.js";
import { redact } from "../util/secrets.js";
import { registerKnownKeys } from "./report-secrets.js";

/** `swerun export` flags, as cac hands them over. */
export interface ExportFlags {
  format?: string;
  output?: string;
}

const FORMATS = ["summary", "judge"];

/** Where the judge files go: `-o results` (or `results.md`) → `results.md` and `results.full.jsonl`. */
export function judgePaths(output: string): { markdown: string; full: string } {
  const base = resolve(output).replace(/\.md$/, "");
  return { markdown: `${base}.md`, full: `${base}.full.jsonl` };
}

/**
 * `swerun export <run folders or trajectories...> --format summary|judge -o PATH`: the harness's
 * formats, one record per trajectory, read and written one trajectory at a time. `summary` without `-o`
 * goes to standard output. Files appear only when complete.
 */
export async function exportCommand(paths: string[], flags: ExportFlags): Promise<number> {
  const format = flags.format ?? "summary";
  if (!FORMATS.includes(format)) {
    throw new UserError(`--format: "${format}" is not a format; use ${FORMATS.join(" or ")}`);
  }
  if (format === "judge" && !flags.output)
    throw new UserError("--format judge needs -o PATH (writes PATH.md and PATH.full.jsonl)");
  const output = flags.output ? checkOutputFile(flags.output, "-o") : undefined;
  if (format === "judge") {
    if (output === "-")
      throw new UserError("-o -: --format judge writes two files (PATH.md and PATH.full.jsonl)");
    const { markdown, full } = judgePaths(flags.output as string);
    checkOutputFile(markdown, "-o");
    checkOutputFile(full, "-o");
  }
  registerKnownKeys();
  const inputs = trajectoryInputs(paths);
  const streams: AtomicFileStream[] = [];
  try {
    let count = 0;
    if (format === "summary") {
      const out = output && output !== "-" ? new AtomicFileStream(output) : undefined;
      if (out) streams.push(out);
      for (const input of inputs) {
        const facts = readRunFacts(input.path);
        const line = `${redact(JSON.stringify(summaryResult(facts, input.verdicts.get(facts.id))))}\n`;
        if (out) out.write(line);
        else process.stdout.write(line);
        count += 1;
      }
    } else {
      const paths = judgePaths(flags.output as string);
      const markdown = new AtomicFileStream(paths.markdown);
      const full = new AtomicFileStream(paths.full);
      streams.push(markdown, full);
      for (const input of inputs) {
        const facts = readRunFacts(input.path);
        // Redacted before the markdown truncates anything, so no secret survives cut in half.
        const json = redact(JSON.stringify(judgeRecord(facts, input.verdicts.get(facts.id))));
        full.write(`${json}\n`);
        markdown.write(judgeMarkdown(JSON.parse(json) as JudgeRecord));
        count += 1;
      }
    }
    for (const stream of streams) stream.commit();
    for (const stream of streams) process.stderr.write(`wrote ${stream.path}\n`);
    if (streams.length === 0) process.stderr.write(`${count} records\n`);
    return 0;
  } finally {
    for (const stream of streams) stream.abort();
  }
}
