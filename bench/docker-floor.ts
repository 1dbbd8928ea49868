/** The floors Docker benchmarks compare against: a bare Engine API exec, and a `docker exec` through the CLI. */
import { spawn } from "node:child_process";
import type { Duplex, Readable } from "node:stream";
import type Docker from "dockerode";

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** `docker exec -w / <container> <argv>`, stdout and stderr read, as mini-swe-agent's subprocess.run does. */
export function cliExec(container: string, argv: string[]): Promise<number> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn("docker", ["exec", "-w", "/", container, ...argv], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 ? resolve(performance.now() - start) : reject(new Error(`docker exec exited with ${code}`)),
    );
  });
}

/** The floor: one exec create, start (reading the output), and inspect for the exit code. */
export async function apiExec(container: Docker.Container, argv: string[]): Promise<number> {
  const start = performance.now();
  const exec = await container.exec({
    Cmd: argv,
    WorkingDir: "/",
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = (await exec.start({ hijack: false, stdin: false })) as Readable;
  stream.resume();
  await new Promise((resolve, reject) => {
    stream.once("end", resolve);
    stream.once("error", reject);
  });
  const info = await exec.inspect();
  if (info.ExitCode !== 0) throw new Error(`exec exited with ${info.ExitCode}`);
  return performance.now() - start;
}

/**
 * A loop that reads command lines and runs each with the interpreter ("$@"), printing a marker after it.
 * With `guarantees`, what an exec gives that a bare loop does not, at the least it costs in a shell: the
 * command in a session of its own (setsid) and its output read to its end (`cat`, which ends when every
 * process holding the output has closed it).
 */
function bareLoop(guarantees: boolean): string {
  const run = guarantees ? 'setsid "$@" "$c" </dev/null 2>&1 | cat' : '"$@" "$c" </dev/null 2>&1';
  return `while IFS= read -r c; do ${run}; echo "@@end $?"; done`;
}

/**
 * The floor of a shell session: one exec whose shell reads command lines from stdin and runs each with the
 * same interpreter, printing a marker after it (with `guarantees`, in a session of its own, its output
 * through `cat`). Returns a function timing one command's round trip, and a
 * close function.
 */
export async function bareSession(
  container: Docker.Container,
  interpreter: string[],
  guarantees = false,
): Promise<{ run: (command: string) => Promise<number>; close: () => void }> {
  const loop = bareLoop(guarantees);
  const exec = await container.exec({
    Cmd: ["/bin/sh", "-c", loop, "bare", ...interpreter],
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = (await exec.start({ hijack: true, stdin: true })) as Duplex;
  let seen = "";
  let wake = () => {};
  stream.on("data", (chunk: Buffer) => {
    seen = (seen + chunk.toString("latin1")).slice(-64);
    wake();
  });
  return {
    async run(command) {
      const start = performance.now();
      seen = "";
      stream.write(`${command}\n`);
      while (!/@@end \d+\n$/.test(seen)) await new Promise<void>((resolve) => (wake = resolve));
      return performance.now() - start;
    },
    close: () => stream.destroy(),
  };
}

/**
 * The floor of running commands in many containers: `instances` containers of `image`, `workers` at a time,
 * each created with a bare loop as its PID 1 that reads command lines from its attached stdin and runs each
 * with `interpreter` in `cwd` (stdin from /dev/null, stderr merged), printing a marker after it; each runs
 * `commands` in turn, then is force-removed. No model, no trajectory and none of the session's guarantees
 * (new process session, output that ends when every writer has closed it): what any design pays for the
 * containers and the commands themselves. Returns the wall time in seconds.
 */
export async function bareLoopContainers(
  docker: Docker,
  options: {
    image: string;
    instances: number;
    workers: number;
    interpreter: string[];
    cwd: string;
    commands: string[];
    /** Each command in a session of its own and its output through `cat`, as `bareSession`'s guarantees. */
    guarantees?: boolean;
  },
): Promise<number> {
  const loop = bareLoop(options.guarantees ?? false);
  let left = options.instances;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: options.workers }, async () => {
      while (left > 0) {
        left -= 1;
        const container = await docker.createContainer({
          Image: options.image,
          Cmd: ["/bin/sh", "-c", loop, "bare", ...options.interpreter],
          OpenStdin: true,
          StdinOnce: true,
          AttachStdin: true,
          WorkingDir: options.cwd,
          Labels: { "swerun.run_id": "bench" },
          HostConfig: { AutoRemove: true, NetworkMode: "none", LogConfig: { Type: "none", Config: {} } },
        });
        const stream = (await container.attach({
          stream: true,
          stdin: true,
          stdout: true,
          stderr: true,
          hijack: true,
        })) as Duplex;
        await container.start();
        let seen = "";
        let wake = () => {};
        stream.on("data", (chunk: Buffer) => {
          seen = (seen + chunk.toString("latin1")).slice(-64);
          wake();
        });
        for (const command of options.commands) {
          seen = "";
          stream.write(`${command}\n`);
          while (!/@@end \d+\n$/.test(seen)) await new Promise<void>((resolve) => (wake = resolve));
        }
        stream.destroy();
        await container.remove({ force: true }).catch(() => {});
      }
    }),
  );
  return (performance.now() - start) / 1000;
}
