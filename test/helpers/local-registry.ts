import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type Docker from "dockerode";
import { baseRootfs } from "../../src/fixture-images/rootfs.js";

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
  const address = `127.0.0.1:${port}`;
  return {
    address,
    serveIn: async (pid) => {
      // A new network namespace starts with its loopback down.
      execFileSync("nsenter", [`--net=/proc/${pid}/ns/net`, "--", "ip", "link", "set", "lo", "up"]);
      await serve(["nsenter", `--net=/proc/${pid}/ns/net`, "--"]);
      const deadline = Date.now() + 15_000;
      while (
        !execFileSync("nsenter", [`--net=/proc/${pid}/ns/net`, "--", "ss", "-ltn"], {
          encoding: "utf8",
        }).includes(address)
      ) {
        if (Date.now() > deadline)
          throw new Error(`docker-registry did not listen in the namespace of ${pid}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stop,
  };
}

/** An image pushed to the registry: its name and its size on a daemon once pulled (bytes). */
export interface PushedImage {
  image: string;
  bytes: number;
}

const sha256 = (data: Buffer | string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

/** Uploads a blob monolithically (distribution API: POST an upload, PUT it with its digest). */
async function uploadBlob(base: string, name: string, blob: Buffer): Promise<string> {
  const digest = sha256(blob);
  const start = await fetch(`${base}/v2/${name}/blobs/uploads/`, { method: "POST" });
  const location = start.headers.get("location");
  if (start.status !== 202 || !location) throw new Error(`registry upload of ${name}: HTTP ${start.status}`);
  const url = new URL(location, base);
  url.searchParams.set("digest", digest);
  const put = await fetch(url, {
    method: "PUT",
    headers: { "Content-Type": "application/octet-stream" },
    body: blob,
  });
  if (put.status !== 201)
    throw new Error(`registry upload of ${name}: HTTP ${put.status} ${await put.text()}`);
  return digest;
}

/**
 * `count` one-layer images: the base test root filesystem plus `megabytes` of random (incompressible) data
 * each, pushed to the registry as `<address>/<repo>-<i>:latest` straight through its HTTP API (gzip level 0, stored blocks: the data is random anyway and
 * the daemon's own push compresses slowly), so they are on no daemon and a batch has to pull them. Names carry
 * `repo`: make it unique per test run. `bytes` is what one of them takes on `docker` once pulled (pulled once
 * and removed again; they all have the same size).
 */
export async function pushRandomImages(
  docker: Docker,
  registry: LocalRegistry,
  repo: string,
  count: number,
  megabytes: number,
): Promise<PushedImage[]> {
  const base = `http://${registry.address}`;
  const names: string[] = [];
  for (let i = 1; i <= count; i++) {
    const rootfs = baseRootfs();
    rootfs.addFile("blob", randomBytes(megabytes * 1e6));
    rootfs.addDirs("testbed");
    const tar = rootfs.tar();
    const layer = gzipSync(tar, { level: 0 });
    const config = Buffer.from(
      JSON.stringify({
        architecture: "amd64",
        os: "linux",
        config: { Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"], Cmd: ["bash"] },
        rootfs: { type: "layers", diff_ids: [sha256(tar)] },
        history: [{ created_by: "swerun test image" }],
      }),
    );
    const name = `${repo}-${i}`;
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.docker.distribution.manifest.v2+json",
      config: {
        mediaType: "application/vnd.docker.container.image.v1+json",
        size: config.length,
        digest: await uploadBlob(base, name, config),
      },
      layers: [
        {
          mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip",
          size: layer.length,
          digest: await uploadBlob(base, name, layer),
        },
      ],
    });
    const put = await fetch(`${base}/v2/${name}/manifests/latest`, {
      method: "PUT",
      headers: { "Content-Type": "application/vnd.docker.distribution.manifest.v2+json" },
      body: manifest,
    });
    if (put.status !== 201)
      throw new Error(`registry manifest of ${name}: HTTP ${put.status} ${await put.text()}`);
    names.push(`${registry.address}/${name}:latest`);
  }
  const first = names[0] ?? "";
  const stream = await docker.pull(first);
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(stream, (error: Error | null) => (error ? reject(error) : resolve())),
  );
  const bytes = (await docker.getImage(first).inspect()).Size;
  await docker.getImage(first).remove();
  return names.map((image) => ({ image, bytes }));
}
