import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { UserError } from "../errors.js";
import { FolderFacts } from "../facts/folder-facts.js";
import { trajectoryInputs } from "../facts/inputs.js";
import { readRunFacts } from "../facts/read-run.js";
import type { RunFacts } from "../facts/run-facts.js";
import { runJsonPath } from "../formats/run-json.js";
import { registerKnownKeys } from "../models/known-keys.js";
import { type JudgeRecord, judgeMarkdown, judgeRecord } from "../reports/judge.js";
import { summaryResult } from "../reports/summary.js";
import { checkOutputFile } from "../run/output.js";
import { AtomicFileStream } from "../util/atomic-stream.js";
import { redact } from "../util/secrets.js";
import type { FlagsOf } from "./options.js";

/** `swerun export` flags (commands/options.ts). */
export type ExportFlags = FlagsOf<"export">;

const FORMATS = ["summary", "judge"];

/** Where the judge files go: `-o results` (or `results.md`) → `results.md` and `results.full.jsonl`. */
export function judgePaths(output: string): { markdown: string; full: string } {
  const base = resolve(output).replace(/\.md$/, "");
  return { markdown: `${base}.md`, full: `${base}.full.jsonl` };
}

/**
 * Reads an instance's facts with the verdict its run folder records (run.json's `eval`, the harness's
 * reports): the folder above the trajectory's (a batch: `<run>/<id>/<id>.traj.json`) when it holds a run.json,
 * else the trajectory's own folder when it holds a run.json or an eval/ folder, else a harness report named
 * after the instance in the eval/ folder above. Each folder's verdicts are read once.
 */
function instanceFactsReader(): (path: string) => RunFacts {
  const folders = new Map<string, FolderFacts>();
  const folderOf = (dir: string) => {
    let folder = folders.get(dir);
    if (!folder) {
      folder = new FolderFacts(dir);
      folders.set(dir, folder);
    }
    return folder;
  };
  return (path) => {
    const batch = dirname(dirname(path));
    const own = dirname(path);
    if (existsSync(runJsonPath(batch))) return folderOf(batch).read(path);
    if (existsSync(runJsonPath(own)) || existsSync(join(own, "eval"))) return folderOf(own).read(path);
    // A folder above with harness reports but no run.json: only a report named after the instance counts.
    const facts = readRunFacts(path);
    const verdict = existsSync(join(batch, "eval")) ? folderOf(batch).verdicts.byId.get(facts.id) : undefined;
    return verdict ? { ...facts, verdict } : facts;
  };
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
  const factsOf = instanceFactsReader();
  const streams: AtomicFileStream[] = [];
  try {
    let count = 0;
    if (format === "summary") {
      const out = output && output !== "-" ? new AtomicFileStream(output) : undefined;
      if (out) streams.push(out);
      for (const input of inputs) {
        const facts = factsOf(input.path);
        const line = `${redact(JSON.stringify(summaryResult(facts)))}\n`;
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
        const facts = factsOf(input.path);
        // Redacted before the markdown truncates anything, so no secret survives cut in half.
        const json = redact(JSON.stringify(judgeRecord(facts)));
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
