import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import {
  closeDockerClient,
  connectDocker,
  resolveDockerEndpoint,
} from "../../src/environments/docker/client.js";
import { procStat } from "./processes.js";

/**
 * Extra Docker daemons for host-pool tests: each a `dockerd` of its own (data root, exec root, pid file and
 * unix socket under one temp dir; no bridge, no iptables, no forwarding), on this machine, in a network
 * namespace of its own: a dockerd without a bridge deletes `docker0`, which in the machine's namespace is the
 * main daemon's. Only the daemons started here are ever stopped or killed, also when a test fails or the
 * process exits.
 */
export interface ExtraDaemon {
  /** `unix://<dir>/docker.sock` */
  host: string;
  dir: string;
  /** The running dockerd's pid (changes on restart). */
  pid(): number;
  /** A client to it (valid until it stops). */
  docker(): Docker;
  /** SIGKILLs the dockerd: its clients' connections fail at once, its containers stay until it restarts. */
  kill(): Promise<void>;
  /** Starts it again on the same roots (it then removes what it left), and waits until it answers. */
  restart(): Promise<void>;
  /** SIGTERMs it, waits for it to exit, unmounts and removes its temp dir. */
  stop(): Promise<void>;
}

const started = new Set<Daemon>();

class Daemon implements ExtraDaemon {
  readonly dir: string;
  readonly host: string;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #client: Docker | undefined;

  constructor(dataMegabytes?: number) {
    this.dir = mkdtempSync(join(tmpdir(), "swerun-dockerd-"));
    this.host = `unix://${join(this.dir, "docker.sock")}`;
    if (dataMegabytes) {
      // A small disk of its own: an ext4 file system in a file, loop-mounted as the data root (unmounted by removeDir).
      const image = join(this.dir, "data.img");
      execFileSync("truncate", ["-s", `${dataMegabytes}M`, image]);
      execFileSync("mkfs.ext4", ["-q", "-F", image], { stdio: "ignore" });
      mkdirSync(join(this.dir, "data"));
      execFileSync("mount", ["-o", "loop", image, join(this.dir, "data")]);
    }
  }

  pid(): number {
    return this.#child?.pid ?? 0;
  }

  docker(): Docker {
    if (!this.#client) throw new Error(`dockerd ${this.dir} is not running`);
    return this.#client;
  }

  async start(): Promise<void> {
    const log = openSync(join(this.dir, "dockerd.log"), "a");
    const child = spawn(
      "unshare",
      [
        "--net",
        "--",
        "dockerd",
        "--data-root",
        join(this.dir, "data"),
        "--exec-root",
        join(this.dir, "exec"),
        "--pidfile",
        join(this.dir, "dockerd.pid"),
        "-H",
        this.host,
        "--bridge=none",
        "--iptables=false",
        "--ip-forward=false",
        "--ip-masq=false",
        "--shutdown-timeout=2",
      ],
      { stdio: ["ignore", log, log] },
    );
    closeSync(log);
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once("exit", () => resolve()));
    started.add(this);
    const endpoint = resolveDockerEndpoint({ DOCKER_HOST: this.host });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`dockerd exited (${child.exitCode}): ${this.#logTail()}`);
      try {
        this.#client = await connectDocker(endpoint, 2_000);
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`dockerd did not answer in 30 s: ${this.#logTail()}`);
        // Polled as waitFor does (the socket answers once dockerd is ready), or until dockerd exits.
        await Promise.race([this.#exited, new Promise((resolve) => setTimeout(resolve, 50))]);
      }
    }
  }

  #logTail(): string {
    try {
      return readFileSync(join(this.dir, "dockerd.log"), "utf8").trim().split("\n").slice(-3).join(" | ");
    } catch {
      return "(no log)";
    }
  }

  #closeClient(): void {
    if (this.#client) closeDockerClient(this.#client);
    this.#client = undefined;
  }

  async kill(): Promise<void> {
    this.#closeClient();
    this.#child?.kill("SIGKILL");
    await this.#exited;
    // Its containerd would hold its database lock and keep a restarted dockerd from starting its own.
    await killProcesses((cmdline) =>
      cmdline.includes(join(this.dir, "exec", "containerd", "containerd.toml")),
    );
  }

  async restart(): Promise<void> {
    await this.kill();
    // The killed processes may linger as zombies (this machine's init may not reap them), which their pid
    // files would have the new dockerd take for running ones.
    rmSync(join(this.dir, "dockerd.pid"), { force: true });
    rmSync(join(this.dir, "exec", "containerd", "containerd.pid"), { force: true });
    await this.start();
  }

  async stop(): Promise<void> {
    this.#closeClient();
    if (this.#child && this.#child.exitCode === null && this.#child.signalCode === null) {
      this.#child.kill("SIGTERM");
      await this.#exited;
    }
    await killProcesses((cmdline) => cmdline.includes(this.dir));
    removeDir(this.dir);
    started.delete(this);
  }

  /** For the exit handler: no waiting, everything at once. */
  forceStop(): void {
    this.#child?.kill("SIGKILL");
    for (const pid of processesMatching((cmdline) => cmdline.includes(this.dir)))
      process.kill(pid, "SIGKILL");
    removeDir(this.dir);
  }
}

/** Live processes (not zombies, not this one) whose command line passes `match`. */
function processesMatching(match: (cmdline: string) => boolean): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (procStat(Number(entry))?.[0] === "Z") continue;
      if (match(readFileSync(`/proc/${entry}/cmdline`, "utf8"))) pids.push(Number(entry));
    } catch {
      // gone already
    }
  }
  return pids;
}

/** SIGKILLs the processes a daemon left (its containerd, shims), found by command line, and waits until they are gone. */
async function killProcesses(match: (cmdline: string) => boolean): Promise<void> {
  const pids = processesMatching(match);
  for (const pid of pids) process.kill(pid, "SIGKILL");
  const deadline = Date.now() + 10_000;
  while (processesMatching((cmdline) => match(cmdline)).some((pid) => pids.includes(pid))) {
    if (Date.now() > deadline) throw new Error(`processes ${pids.join(", ")} did not exit after SIGKILL`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Unmounts what dockerd mounted under `dir` (its data root is bind-mounted onto itself), deepest first, then removes it. */
function removeDir(dir: string): void {
  const mounts = readFileSync("/proc/mounts", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[1] ?? "")
    .filter((path) => path === dir || path.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const path of mounts) {
    try {
      execFileSync("umount", ["-l", path], { stdio: "ignore" });
    } catch {
      // already unmounted
    }
  }
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
}

let exitHandler = false;

/**
 * Starts a dockerd of its own and waits until it answers; stopped in afterAll (and at process exit).
 * `dataMegabytes`: its data root is a loop-mounted file system of that size (a daemon whose disk fills).
 */
export async function startDaemon(options: { dataMegabytes?: number } = {}): Promise<ExtraDaemon> {
  if (!exitHandler) {
    exitHandler = true;
    process.once("exit", () => {
      for (const daemon of started) daemon.forceStop();
    });
  }
  const daemon = new Daemon(options.dataMegabytes);
  try {
    await daemon.start();
  } catch (error) {
    await daemon.stop();
    throw error;
  }
  return daemon;
}

/** Stops every daemon this process started. */
export async function stopDaemons(): Promise<void> {
  await Promise.all([...started].map((daemon) => daemon.stop()));
}

/** Copies images from one daemon into another (`docker save | docker load` through the Engine API). */
export async function loadImages(source: Docker, target: Docker, images: string[]): Promise<void> {
  for (const image of images) {
    const tar = await source.getImage(image).get();
    const output = await target.loadImage(tar, { quiet: true });
    await new Promise<void>((resolve, reject) => {
      output.on("error", reject);
      output.on("end", resolve);
      output.resume();
    });
  }
}

/** Why extra daemons cannot be started on this machine (not root, no dockerd), if they cannot. */
export function extraDaemonsProblem(): string | undefined {
  if (process.getuid?.() !== 0) return "starting extra dockerd processes needs root";
  try {
    execFileSync("dockerd", ["--version"], { stdio: "ignore" });
  } catch {
    return "no dockerd on PATH";
  }
  try {
    execFileSync("unshare", ["--net", "--", "true"], { stdio: "ignore" });
  } catch {
    return "`unshare --net` does not work here (util-linux)";
  }
  return undefined;
}
