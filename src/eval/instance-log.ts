import { appendFileSync, writeFileSync } from "node:fs";
import { namingFile } from "../util/file-error.js";
import { redact } from "../util/secrets.js";

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** `2024-01-31 12:00:00,123`: Python logging's asctime, local time. */
function asctime(date = new Date()): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())},${pad(date.getMilliseconds(), 3)}`;
}

/**
 * run_instance.log: `<time> - <LEVEL> - <message>` lines, as the harness's instance logger writes them: emptied
 * when a grading starts, then appended to line by line (the lines written stay as they are). A line that
 * cannot be written (a full disk, a read-only folder) throws a FileWriteError naming the log.
 */
export class InstanceLog {
  readonly path: string;
  constructor(path: string) {
    this.path = path;
    namingFile(path, () => writeFileSync(path, ""));
  }

  info(message: string): void {
    this.#line("INFO", message);
  }

  warning(message: string): void {
    this.#line("WARNING", message);
  }

  error(message: string): void {
    this.#line("ERROR", message);
  }

  /**
   * A line where a log that cannot take it must not change the outcome (the failure being told, the container's
   * removal after it): the caller's result says what went wrong (the disk that failed the grading is full), so
   * this does not throw.
   */
  lineIfWritable(level: "INFO" | "ERROR", message: string): void {
    try {
      this.#line(level, message);
    } catch {
      // the log stays as far as it was written
    }
  }

  #line(level: string, message: string): void {
    namingFile(this.path, () => appendFileSync(this.path, `${asctime()} - ${level} - ${redact(message)}\n`));
  }
}
