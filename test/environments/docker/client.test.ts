import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  closeDockerClient,
  createDockerClient,
  resolveDockerEndpoint,
} from "../../../src/environments/docker/client.js";
import { DockerEnvironment } from "../../../src/environments/docker/environment.js";
import { describeDocker, dockerFixture, dockerTestConfig } from "../../helpers/docker.js";
import { rootfsTar } from "../../helpers/docker-images.js";
import { startFakeRegistry } from "../../helpers/docker-registry-server.js";
import { tempDir } from "../../helpers/tmp.js";

const RUN_ID = `docker-client-test-${process.pid}`;
const savedEnv = { ...process.env };

afterEach(() => {
  for (const key of ["DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "PATH"]) {
    if (savedEnv[key] === undefined) delete process.env[key];
    else process.env[key] = savedEnv[key];
  }
});

/** A docker config dir whose current context points at `host`. */
function contextConfigDir(name: string, host: string): string {
  const dir = tempDir();
  writeFileSync(join(dir, "config.json"), JSON.stringify({ currentContext: name }));
  const meta = join(dir, "contexts", "meta", createHash("sha256").update(name).digest("hex"));
  mkdirSync(meta, { recursive: true });
  writeFileSync(
    join(meta, "meta.json"),
    JSON.stringify({ Name: name, Endpoints: { docker: { Host: host } } }),
  );
  return dir;
}

describe("finding the Docker daemon (DOCKER_HOST, contexts)", () => {
  it("resolves DOCKER_HOST unix, tcp and ssh addresses as the docker CLI does", () => {
    expect(resolveDockerEndpoint({})).toMatchObject({ kind: "unix", socketPath: "/var/run/docker.sock" });
    expect(resolveDockerEndpoint({ DOCKER_HOST: "unix:///run/user/1000/docker.sock" })).toMatchObject({
      kind: "unix",
      socketPath: "/run/user/1000/docker.sock",
      source: "DOCKER_HOST",
    });
    expect(resolveDockerEndpoint({ DOCKER_HOST: "tcp://10.0.0.5:2375" })).toMatchObject({
      kind: "tcp",
      hostname: "10.0.0.5",
      port: 2375,
    });
    expect(
      resolveDockerEndpoint({
        DOCKER_HOST: "tcp://10.0.0.5",
        DOCKER_TLS_VERIFY: "1",
        DOCKER_CERT_PATH: "/nonexistent",
      }),
    ).toMatchObject({
      kind: "tcp",
      port: 2376,
      tls: { verify: true },
    });
    expect(resolveDockerEndpoint({ DOCKER_HOST: "ssh://deploy@build-box:2222" })).toMatchObject({
      kind: "ssh",
      user: "deploy",
      hostname: "build-box",
      port: 2222,
    });
    expect(() => resolveDockerEndpoint({ DOCKER_HOST: "fd://" })).toThrow(
      /supports unix:\/\/, tcp:\/\/ and ssh:\/\//,
    );
  });

  it("uses the current docker context unless DOCKER_HOST is set", () => {
    const dir = contextConfigDir("remote", "tcp://10.1.2.3:2375");
    expect(resolveDockerEndpoint({ DOCKER_CONFIG: dir })).toMatchObject({
      host: "tcp://10.1.2.3:2375",
      source: 'docker context "remote"',
    });
    expect(resolveDockerEndpoint({ DOCKER_CONFIG: dir, DOCKER_HOST: "unix:///x.sock" })).toMatchObject({
      socketPath: "/x.sock",
    });
    expect(() => resolveDockerEndpoint({ DOCKER_CONFIG: dir, DOCKER_CONTEXT: "nope" })).toThrow(
      /Docker context "nope" .* does not exist/,
    );
  });

  it("gives docker-modem's per-request util.inspect a one-word agent: no socket walk, no TLS key", () => {
    const dir = tempDir();
    for (const name of ["ca.pem", "cert.pem", "key.pem"])
      writeFileSync(join(dir, name), `${name}-secret-pem`);
    for (const env of [
      { DOCKER_HOST: "unix:///x.sock" },
      { DOCKER_HOST: "tcp://10.1.2.3:2376", DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: dir },
      { DOCKER_HOST: "ssh://me@box" },
    ]) {
      const client = createDockerClient(resolveDockerEndpoint(env));
      const modem = client.modem as unknown as { agent: unknown };
      const shown = inspect({ agent: modem.agent }, { showHidden: true, depth: null });
      expect(shown).toBe("{ agent: [swerun docker agent] }");
      closeDockerClient(client);
    }
  });

  it("says in one line that the daemon is unreachable, where it looked and how to fix it", async () => {
    process.env.DOCKER_HOST = "unix:///nonexistent/swerun/docker.sock";
    const error = await DockerEnvironment.create(dockerTestConfig("any:latest"), { runId: RUN_ID }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).name).toBe("DockerUnavailableError");
    expect((error as Error).message).toMatch(
      /^Cannot connect to the Docker daemon at unix:\/\/\/nonexistent\/swerun\/docker.sock \(from DOCKER_HOST\): .*ENOENT.*; is Docker running\? .*set DOCKER_HOST/,
    );
    expect((error as Error).message).not.toContain("\n");

    process.env.DOCKER_HOST = "tcp://127.0.0.1:1";
    const tcpError = await DockerEnvironment.create(dockerTestConfig("any:latest"), { runId: RUN_ID }).catch(
      (e: unknown) => e,
    );
    expect((tcpError as Error).message).toMatch(
      /^Cannot connect to the Docker daemon at tcp:\/\/127.0.0.1:1 .*ECONNREFUSED/,
    );
  });
});

await describeDocker("Docker endpoints and image pulls (real daemon)", () => {
  let images: { base: string; swebench: string };
  let socketPath: string;

  beforeAll(async () => {
    ({ images } = await dockerFixture());
    socketPath = resolveDockerEndpoint().socketPath ?? "";
  });

  it("reaches the daemon over DOCKER_HOST=tcp://", async () => {
    let connections = 0;
    const proxy = net.createServer((client) => {
      connections++;
      const daemon = net.connect(socketPath);
      client.pipe(daemon).pipe(client);
      client.on("error", () => daemon.destroy());
      daemon.on("error", () => client.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    try {
      process.env.DOCKER_HOST = `tcp://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
      const env = await DockerEnvironment.create(dockerTestConfig(images.base), { runId: RUN_ID });
      try {
        expect((await env.execute({ command: "echo over tcp" })).output).toBe("over tcp\n");
      } finally {
        await env.close();
      }
      expect(connections).toBeGreaterThan(0);
    } finally {
      proxy.close();
    }
  });

  it("reaches the daemon over DOCKER_HOST=ssh:// through the ssh command, as the docker CLI does", async () => {
    const bin = tempDir();
    const log = join(bin, "ssh.log");
    // A stand-in for ssh: logs its arguments and bridges stdio to the local daemon, as `docker system dial-stdio` would.
    const bridge = `const s=require("net").connect(${JSON.stringify(socketPath)});process.stdin.pipe(s);s.pipe(process.stdout);s.on("close",()=>process.exit(0));`;
    writeFileSync(
      join(bin, "ssh"),
      `#!/bin/sh\necho "$@" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(bridge)}\n`,
    );
    chmodSync(join(bin, "ssh"), 0o755);
    process.env.PATH = `${bin}:${process.env.PATH}`;
    process.env.DOCKER_HOST = "ssh://deploy@build-box:2222";
    const env = await DockerEnvironment.create(dockerTestConfig(images.base), { runId: RUN_ID });
    try {
      expect((await env.execute({ command: "echo over ssh" })).output).toBe("over ssh\n");
    } finally {
      await env.close();
    }
    expect(readFileSync(log, "utf8").split("\n")[0]).toBe(
      "-o ConnectTimeout=30 -T -l deploy -p 2222 -- build-box docker system dial-stdio",
    );
  });

  it("pulls a missing image, reporting layers and bytes, then runs it", async () => {
    const id = randomBytes(16).toString("hex");
    const registry = await startFakeRegistry(rootfsTar({ "etc/swerun-pull-id": id }), { blobDelayMs: 1_500 });
    const { docker } = await dockerFixture();
    const progress: string[] = [];
    try {
      const env = await DockerEnvironment.create(dockerTestConfig(registry.image, { pull_timeout: 60 }), {
        runId: RUN_ID,
        onProgress: (line) => progress.push(line),
      });
      try {
        expect((await env.execute({ command: "cat /etc/swerun-pull-id" })).output).toBe(id);
      } finally {
        await env.close();
      }
      expect(progress[0]).toBe(`Pulling Docker image ${registry.image} (not present on the daemon)...`);
      expect(progress.some((line) => /: 0\/1 layers done, \d+\.\d\/\d+\.\d MB downloaded$/.test(line))).toBe(
        true,
      );
      const mb = (registry.layerBytes / 1e6).toFixed(1);
      expect(progress.at(-1)).toMatch(
        new RegExp(
          `^Pulled ${registry.image.replace(/[.]/g, "\\.")} in \\d+\\.\\d s \\(1/1 layers done, ${mb}/${mb} MB downloaded\\)$`,
        ),
      );
    } finally {
      await registry.close();
      await docker
        .getImage(registry.image)
        .remove({ force: true })
        .catch(() => {});
    }
  });

  it("stops a pull that outlasts pull_timeout, with an error naming the image", async () => {
    const registry = await startFakeRegistry(
      rootfsTar({ "etc/swerun-pull-id": randomBytes(16).toString("hex") }),
      {
        stall: true,
      },
    );
    try {
      const started = Date.now();
      const error = await DockerEnvironment.create(dockerTestConfig(registry.image, { pull_timeout: 1 }), {
        runId: RUN_ID,
      }).catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((error as Error).message).toBe(
        `Pulling Docker image "${registry.image}" took longer than environment.pull_timeout (1 s); pull it first (docker pull ${registry.image}) or raise pull_timeout`,
      );
    } finally {
      await registry.close();
    }
  });
});
