import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { parseDockerHostFlag, splitHostSpec } from "../../src/config/docker-hosts.js";
import { loadConfig } from "../../src/config/load.js";
import { configEndpoint, hostEndpoint } from "../../src/environments/docker/client.js";
import { tempDir } from "../helpers/tmp.js";

const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected an error");
};

describe("--docker-host URL[:workers]", () => {
  it("reads a trailing :N as the worker count of a unix socket", () => {
    expect(splitHostSpec("unix:///var/run/docker.sock:2")).toEqual({
      host: "unix:///var/run/docker.sock",
      workers: 2,
    });
    expect(splitHostSpec("unix:///var/run/docker.sock")).toEqual({
      host: "unix:///var/run/docker.sock",
      workers: undefined,
    });
  });

  it("reads ssh://host:N as N workers, and ssh://host:port:N as a port and N workers", () => {
    expect(splitHostSpec("ssh://gpu-a:8")).toEqual({ host: "ssh://gpu-a", workers: 8 });
    expect(splitHostSpec("ssh://me@gpu-a")).toEqual({ host: "ssh://me@gpu-a", workers: undefined });
    expect(splitHostSpec("ssh://me@gpu-a:2222:8")).toEqual({ host: "ssh://me@gpu-a:2222", workers: 8 });
  });

  it("reads the first :N of tcp as the port, so workers come after it", () => {
    expect(splitHostSpec("tcp://h:2376:4")).toEqual({ host: "tcp://h:2376", workers: 4 });
    expect(splitHostSpec("tcp://h:2376")).toEqual({ host: "tcp://h:2376", workers: undefined });
    expect(splitHostSpec("tcp://h")).toEqual({ host: "tcp://h", workers: undefined });
    expect(splitHostSpec("tcp://[::1]:2375:3")).toEqual({ host: "tcp://[::1]:2375", workers: 3 });
  });

  it("gives a host without a worker count one worker", () => {
    expect(parseDockerHostFlag("ssh://gpu-b")).toEqual({ host: "ssh://gpu-b", workers: 1 });
  });

  it("refuses what it cannot read, saying why in one line", () => {
    expect(errorOf(() => splitHostSpec("gpu-a:8"))).toBe(
      "expected unix:///path, tcp://host:port or ssh://[user@]host",
    );
    expect(errorOf(() => splitHostSpec("fd://"))).toMatch(/^fd:\/\/ is not a Docker address/);
    expect(errorOf(() => splitHostSpec("ssh://box:2222"))).toBe(
      "2222 workers is more than 256 on one host; an ssh port goes before the worker count (ssh://box:2222:N) or in ~/.ssh/config",
    );
    expect(errorOf(() => splitHostSpec("ssh://box:0"))).toBe("the worker count must be at least 1");
    expect(errorOf(() => splitHostSpec("tcp://h:x:2"))).toBe(
      '"x" is not a port or a worker count (a whole number)',
    );
    expect(errorOf(() => splitHostSpec("tcp://h:1:2:3"))).toBe(
      "expected at most a port and a worker count after the host",
    );
    expect(errorOf(() => splitHostSpec("ssh://me:secret@box:4"))).toBe(
      "a password in the address is not supported: use ssh keys",
    );
    expect(errorOf(() => splitHostSpec("ssh://:4"))).toMatch(/names no host/);
  });

  it("resolves a host's endpoint as DOCKER_HOST would, with the entry's TLS keys winning", () => {
    const dir = tempDir();
    expect(hostEndpoint({ host: "ssh://me@box:2222", workers: 1 }, "--docker-host")).toMatchObject({
      kind: "ssh",
      hostname: "box",
      port: 2222,
      user: "me",
      source: "--docker-host",
    });
    const tls = hostEndpoint(
      { host: "tcp://box:2376", workers: 1, cert_path: dir, tls_verify: true },
      "x",
      {},
    );
    expect(tls).toMatchObject({ kind: "tcp", port: 2376, tls: { verify: true } });
    expect(hostEndpoint({ host: "tcp://box:2375", workers: 1 }, "x", {}).tls).toBeUndefined();
    expect(hostEndpoint({ host: "tcp://box:2375", workers: 1, tls: true }, "x", {}).tls).toMatchObject({
      verify: false,
    });
  });
});

describe("environment.docker_hosts", () => {
  const load = (hosts: unknown) => {
    const dir = tempDir();
    const path = join(dir, "hosts.yaml");
    writeFileSync(
      path,
      JSON.stringify({ environment: { environment_class: "docker", docker_hosts: hosts } }),
    );
    return loadConfig(["swebench", path]);
  };

  it("takes URL[:workers] strings and {host, workers, tls options} objects", () => {
    const config = load([
      "unix:///var/run/docker.sock:2",
      { host: "ssh://me@gpu-a:2222", workers: 8 },
      { host: "tcp://gpu-b:2376", workers: 4, tls_verify: true, cert_path: "/certs" },
    ]);
    expect(config.environment.environment_class === "docker" && config.environment.docker_hosts).toEqual([
      { host: "unix:///var/run/docker.sock", workers: 2 },
      { host: "ssh://me@gpu-a:2222", workers: 8 },
      { host: "tcp://gpu-b:2376", workers: 4, tls_verify: true, cert_path: "/certs" },
    ]);
    // Other commands run on the first host.
    if (config.environment.environment_class !== "docker") throw new Error("expected docker");
    expect(configEndpoint(config.environment)).toMatchObject({
      kind: "unix",
      socketPath: "/var/run/docker.sock",
    });
  });

  it("refuses a bad entry in one line naming the field", () => {
    const message = (hosts: unknown) => {
      try {
        load(hosts);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).not.toContain("\n");
        return (error as Error).message.replace(/^.*hosts\.yaml: /, "");
      }
      throw new Error("expected a ConfigError");
    };
    expect(message(["ssh://box:2222"])).toBe(
      'environment.docker_hosts.0: "ssh://box:2222": 2222 workers is more than 256 on one host; an ssh port goes before the worker count (ssh://box:2222:N) or in ~/.ssh/config',
    );
    expect(message([{ host: "gpu-a", workers: 2 }])).toBe(
      'environment.docker_hosts.0.host: "gpu-a": expected unix:///path, tcp://host:port or ssh://[user@]host',
    );
    expect(message([{ host: "tcp://h:2376:4" }])).toBe(
      'environment.docker_hosts.0.host: "tcp://h:2376:4": expected at most a port after the host (the worker count is the `workers` key)',
    );
    expect(message(["unix:///x.sock", { host: "ssh://a", workers: 0 }])).toMatch(
      /^environment\.docker_hosts\.1\.workers: /,
    );
    expect(message([{ host: "ssh://a", password: "x" }])).toMatch(/docker_hosts\.0\.password: unknown key/);
    expect(message([7])).toBe('environment.docker_hosts.0: expected "URL[:workers]" or {host, workers}');
  });
});
