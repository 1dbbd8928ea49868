import { appendFileSync, writeFileSync } from "node:fs";
import { redact } from "../util/secrets.js";

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** `2024-01-31 12:00:00,123`: Python logging's asctime, local time. */
function asctime(date = new Date()): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())},${pad(date.getMilliseconds(), 3)}`;
}

/** run_instance.log: `<time> - <LEVEL> - <message>` lines, as the harness's instance logger writes them. */
export class InstanceLog {
  readonly path: string;
  constructor(path: string) {
    this.path = path;
    writeFileSync(path, "");
  }

  info(message: string): void {
    appendFileSync(this.path, `${asctime()} - INFO - ${redact(message)}\n`);
  }

  warning(message: string): void {
    appendFileSync(this.path, `${asctime()} - WARNING - ${redact(message)}\n`);
  }

  error(message: string): void {
    appendFileSync(this.path, `${asctime()} - ERROR - ${redact(message)}\n`);
  }
}
