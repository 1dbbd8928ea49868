import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { type FileWriteError, fileWriteError } from "../util/file-error.js";
import { redact } from "../util/secrets.js";
import type { BatchDisplay } from "./display.js";

/**
 * swerun.log's lines (`log`), those the display shows too (`say`), and the first output that could not be
 * written (`failed`: said once, with what to do; swerun.log itself is one of them).
 */
export function batchLog(outputDir: string, display: BatchDisplay) {
  const logPath = join(outputDir, "swerun.log");
  const append = (line: string) => appendFileSync(logPath, `${new Date().toISOString()} ${redact(line)}\n`);
  let failure: FileWriteError | undefined;
  const failed = (error: FileWriteError) => {
    if (failure) return;
    failure = error;
    const line = outputFailureLine(error, outputDir);
    display.message(line);
    try {
      append(line);
    } catch {
      // said on the console; the log is what could not be written
    }
  };
  const log = (line: string) => {
    try {
      append(line);
    } catch (error) {
      failed(fileWriteError(logPath, error));
    }
  };
  const say = (line: string) => {
    display.message(line);
    log(line);
  };
  return { log, say, failed, failure: () => failure };
}

/** What the batch says when an output cannot be written: what, why, what it does now, and what to do. */
export function outputFailureLine(error: FileWriteError, outputDir: string): string {
  const full = error.code === "ENOSPC" || error.code === "EDQUOT";
  const fix = full ? `free space on the disk of ${outputDir}` : `make ${outputDir} writable again`;
  return `swerun: ${error.message}. No new instances start; running ones finish if they can still write their trajectories. What finished is kept: ${fix}, then run the command again to resume (finished instances do not run again, unless --redo-existing).`;
}
