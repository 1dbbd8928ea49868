/** The floors Docker benchmarks compare against: a bare Engine API exec, and a `docker exec` through the CLI. */
import { spawn } from "node:child_process";
import type { Readable } from "node:stream";
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
