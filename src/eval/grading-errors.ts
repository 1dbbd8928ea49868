import { rmSync } from "node:fs";
import { join } from "node:path";
import { daemonMessage } from "../environments/docker/pull.js";
import { FileWriteError, namingFile } from "../util/file-error.js";
import { LOG_FILES } from "./harness-constants.js";
import { classifyText } from "./infra-failure.js";
import type { InstanceLog } from "./instance-log.js";

/** A grading that ended as the harness's gradings end without a report (the patch did not apply, a timeout). */
export class GradingError extends Error {}

/** A grading that could not be done (its container or the daemon failed, or it was interrupted). */
export class InfraFailure extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** The infra-failure reason of an unexpected error: the harness's words for the daemon's, else swerun's own. */
function infraReason(error: unknown, message: string): string {
  if (error instanceof InfraFailure) return error.reason;
  if (error instanceof FileWriteError) return "output_unwritable";
  const { code, syscall } = error as NodeJS.ErrnoException;
  const network =
    ["connect", "read", "write"].includes(syscall ?? "") && /^E(CONN|PIPE|TIMEDOUT)/.test(code ?? "");
  // A file system call that failed: a log of swerun's could not be written.
  if (syscall && !network) return "output_unwritable";
  return classifyText(message)?.reason ?? "container_unavailable";
}

/**
 * What a grading that threw ends with, logged to run_instance.log: the harness's error (its report.json
 * removed, as the harness leaves none), or an infra failure with its reason (no verdict).
 */
export function gradingFailure(
  error: unknown,
  log: InstanceLog,
  instanceId: string,
  logDir: string,
): { error: string; infra_failure?: string } {
  // A file that could not be written says which, in one line (`could not write <file>: <why> (<code>)`).
  const message =
    error instanceof GradingError || error instanceof InfraFailure || error instanceof FileWriteError
      ? error.message
      : `${error instanceof Error ? error.constructor.name : "Error"}: ${daemonMessage(error)}`;
  log.lineIfWritable("ERROR", `Error in evaluating ${instanceId}: ${message}`);
  const first = message.split("\n")[0] ?? message;
  if (error instanceof GradingError) {
    // The harness's errors leave no report.json: one from an earlier grading goes too.
    const report = join(logDir, LOG_FILES.report);
    namingFile(report, () => rmSync(report, { force: true }));
    return { error: first };
  }
  const reason = infraReason(error, message);
  const why = first === reason ? first : `${reason}: ${first}`;
  return { error: why, infra_failure: reason };
}
