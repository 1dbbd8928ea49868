import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROCESS_TAG } from "../../src/environments/spawner.js";
import { packageRoot } from "../../src/util/package-root.js";
import { alive } from "../helpers/processes.js";
import { tempDir } from "../helpers/tmp.js";

async function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("the shell watchdog (shell/command-watchdog.sh, swerun's when no spawner runs)", () => {
  it("kills, once its stdin closes, the group that a tagged process leads, though no line told it the leader's pid", async () => {
    const dir = tempDir();
    const prefix = `watchdogtest${process.pid}-`;
    const watchdog = spawn("/bin/sh", [join(packageRoot(), "shell", "command-watchdog.sh"), prefix], {
      stdio: ["pipe", "ignore", "ignore"],
    });
    // A command as swerun spawns it (a session and group of its own, its tag in its environment) with a
    // member of its group that cleared its environment: what a swerun killed before it wrote "+<pid>" leaves.
    const command = spawn("/bin/sh", ["-c", "env -i sleep 600 & echo $! > bare.pid; exec sleep 600"], {
      cwd: dir,
      detached: true,
      stdio: "ignore",
      env: { ...process.env, [PROCESS_TAG]: `${prefix}local:1` },
    });
    const bareFile = join(dir, "bare.pid");
    await until(() => existsSync(bareFile) && readFileSync(bareFile, "utf8").trim() !== "", 10_000);
    const pids = [command.pid ?? 0, Number(readFileSync(bareFile, "utf8"))];
    for (const pid of pids) expect(alive(pid)).toBe(true);
    watchdog.stdin.end();
    await until(() => !pids.some(alive), 10_000);
    const left = pids.filter(alive);
    for (const pid of left) process.kill(pid, "SIGKILL");
    expect(left).toEqual([]);
  });
});
