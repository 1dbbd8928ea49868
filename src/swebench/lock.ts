import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { processAlive } from "../util/process-alive.js";

/**
 * Takes `<dir>/.swerun.lock` so that only one swerun process writes an output folder. A lock left by a
 * process that is gone (on this host) is taken over. Returns the function that releases it.
 */
export function lockOutputDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, ".swerun.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(
        fd,
        JSON.stringify({ pid: process.pid, host: hostname(), started: new Date().toISOString() }),
      );
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      let holder: { pid?: number; host?: string } = {};
      try {
        holder = JSON.parse(readFileSync(path, "utf8"));
      } catch {
        // a lock file being written right now, or garbage: treat as held
      }
      const sameHost = holder.host === hostname();
      if (sameHost && typeof holder.pid === "number" && !processAlive(holder.pid)) {
        rmSync(path, { force: true });
        continue;
      }
      throw new UserError(
        `${dir} is being written by another swerun process (pid ${holder.pid ?? "?"} on ${holder.host ?? "?"}); wait for it, or delete ${path} if it is gone`,
      );
    }
  }
  throw new UserError(`${dir}: could not take the output lock ${path}`);
}
