import { spawn } from "node:child_process";
import { CLI } from "./cli.js";

/**
 * The CLI on a real pseudo-terminal (util-linux `script`), for what only happens on a terminal: prompts,
 * Ctrl-C. `until` waits for output matching a pattern (no fixed sleeps); `type` sends keys.
 */
export function startOnTerminal(args: string[], cwd: string) {
  const quoted = [process.execPath, CLI, ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(" ");
  // `script` runs the command through $SHELL -c; `exec` makes the CLI the terminal's only foreground process
  // whatever that shell is (dash, /bin/sh when SHELL is unset, would otherwise wait as the parent, take the
  // Ctrl-C too and exit 130 when the CLI has handled it).
  const child = spawn("script", ["-qfec", `exec ${quoted}`, "/dev/null"], {
    cwd,
    env: { ...process.env, SHELL: "/bin/sh", TERM: "dumb", NO_COLOR: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  let seen = 0;
  const waiters: Array<() => void> = [];
  const onData = (chunk: Buffer) => {
    output += chunk.toString("utf8");
    for (const wake of waiters.splice(0)) wake();
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const done = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    output: () => output,
    /** Resolves when output after the last match matches `pattern`; fails after `timeoutMs`. */
    async until(pattern: RegExp, timeoutMs = 30_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(output.slice(seen));
        if (match) {
          seen += match.index + match[0].length;
          return;
        }
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`no ${pattern} in the terminal output:\n${output.slice(-2000)}`);
        }
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, deadline - Date.now()).unref();
        });
      }
    },
    type(keys: string): void {
      child.stdin.write(keys);
    },
    done,
  };
}
