import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { baseRootfs, importImage } from "../../src/images/rootfs.js";

/**
 * A real Docker registry (Debian's `docker-registry`, the CNCF distribution registry) on 127.0.0.1 with a
 * temporary storage folder, which Docker daemons pull from over plain HTTP (127.0.0.0/8 is an insecure
 * registry by default). Started and stopped by the tests; `serveIn` starts a second process on the same
 * storage and port inside another network namespace (an extra dockerd's), so that daemon pulls the same images.
 */
export interface LocalRegistry {
  /** `127.0.0.1:<port>` */
  address: string;
  serveIn(pid: number): Promise<void>;
  stop(): Promise<void>;
}

/** Why the registry cannot run here (no `docker-registry` binary), if it cannot. */
export function registryProblem(): string | undefined {
  try {
    execFileSync("docker-registry", ["--version"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "no docker-registry on PATH (apt-get install docker-registry)";
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startRegistry(): Promise<LocalRegistry> {
  const dir = mkdtempSync(join(tmpdir(), "swerun-registry-"));
  const port = await freePort();
  const config = join(dir, "config.yml");
  writeFileSync(
    config,
    [
      "version: 0.1",
      "log: {level: error, accesslog: {disabled: true}}",
      `storage: {filesystem: {rootdirectory: ${join(dir, "data")}}, delete: {enabled: true}}`,
      `http: {addr: "127.0.0.1:${port}"}`,
      "",
    ].join("\n"),
  );
  const children: ChildProcess[] = [];
  const serve = async (prefix: string[]) => {
    const log = openSync(join(dir, `registry-${children.length}.log`), "a");
    const [command = "", ...args] = [...prefix, "docker-registry", "serve", config];
    const child = spawn(command, args, { stdio: ["ignore", log, log] });
    closeSync(log);
    children.push(child);
    return child;
  };
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  const child = await serve([]);
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `docker-registry exited: ${readFileSync(join(dir, "registry-0.log"), "utf8").slice(-500)}`,
      );
    try {
      if ((await fetch(`http://127.0.0.1:${port}/v2/`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error("docker-registry did not answer in 15 s");
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    address: `127.0.0.1:${port}`,
    serveIn: async (pid) => {
      await serve(["nsenter", `--net=/proc/${pid}/ns/net`, "--"]);
    },
    stop,
  };
}

/** An image pushed to the registry: its name and its size on a daemon (bytes). */
export interface PushedImage {
  image: string;
  bytes: number;
}

/**
 * `count` images of the base test root filesystem plus `megabytes` of random (incompressible) data each,
 * imported offline, pushed to the registry as `<address>/<repo>-<i>:latest`, then removed from `docker`
 * (so a batch has to pull them). Names carry `repo`: make it unique per test run.
 */
export async function pushRandomImages(
  docker: Docker,
  registry: LocalRegistry,
  repo: string,
  count: number,
  megabytes: number,
): Promise<PushedImage[]> {
  const pushed: PushedImage[] = [];
  for (let i = 1; i <= count; i++) {
    const rootfs = baseRootfs();
    rootfs.addFile("blob", randomBytes(megabytes * 1e6));
    rootfs.addFile("testbed/.keep", "");
    const name = `${registry.address}/${repo}-${i}`;
    await importImage(docker, rootfs.tar(), name, "latest");
    const image = `${name}:latest`;
    const bytes = (await docker.getImage(image).inspect()).Size;
    const stream = await docker.getImage(image).push({ authconfig: {} } as object);
    const body = await new Promise<string>((resolve, reject) => {
      let text = "";
      stream.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      stream.on("end", () => resolve(text));
      stream.on("error", reject);
    });
    const error = /"error"\s*:\s*"([^"]*)"/.exec(body);
    if (error) throw new Error(`docker push ${image} failed: ${error[1]}`);
    await docker.getImage(image).remove();
    pushed.push({ image, bytes });
  }
  return pushed;
}
