import os from "node:os";
import type Docker from "dockerode";
import { type DockerHostConfig, parseDockerHostFlag } from "../../config/docker-hosts.js";
import { UserError } from "../../errors.js";
import { asList } from "../../util/as-list.js";
import { processAlive } from "../../util/process-alive.js";
import {
  closeDockerClient,
  connectDocker,
  type DockerEndpoint,
  hostEndpoint,
  resolveDockerEndpoint,
} from "./client.js";
import { CONTAINER_LABELS } from "./container-labels.js";

export interface CleanupOptions {
  /** Also remove kept containers and those of runs still going (or started on another machine). */
  all?: boolean;
  /** Only the containers of this run (kept ones included). */
  runId?: string;
  /** With runId: leave the containers kept on purpose (keep_container: true). */
  skipKept?: boolean;
  /** List what would be removed, remove nothing. */
  dryRun?: boolean;
  /** Where lines go (stdout by default). */
  print?: (line: string) => void;
  /** `--docker-host URL[:workers]` (repeatable): clean each of these daemons (a worker count is ignored). */
  dockerHost?: string | string[];
  /** The daemons to clean, already parsed (a batch's host pool); `dockerHost` and DOCKER_HOST otherwise. */
  hosts?: DockerHostConfig[];
}

/** The daemons a cleanup visits: `hosts`, else the `--docker-host` flags, else DOCKER_HOST's daemon. */
function cleanupEndpoints(options: CleanupOptions): DockerEndpoint[] {
  if (options.hosts && options.hosts.length > 0)
    return options.hosts.map((host) => hostEndpoint(host, "the batch's hosts"));
  const flags = asList(options.dockerHost);
  if (flags.length === 0) return [resolveDockerEndpoint()];
  return flags.map((spec) => {
    try {
      return hostEndpoint(parseDockerHostFlag(spec), "--docker-host");
    } catch (error) {
      throw new UserError(`--docker-host ${spec}: ${(error as Error).message}`);
    }
  });
}

function age(createdSeconds: number): string {
  const seconds = Math.max(0, Math.floor(Date.now() / 1000 - createdSeconds));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}m`;
  return `${Math.floor(seconds / 86_400)}d${Math.floor((seconds % 86_400) / 3600)}h`;
}

/** Why a container is left alone without --all, or undefined when it belongs to a run that is over. */
function reasonToKeep(container: Docker.ContainerInfo, options: CleanupOptions): string | undefined {
  if (options.all) return undefined;
  const labels = container.Labels;
  if (labels[CONTAINER_LABELS.keep] === "true" && (!options.runId || options.skipKept))
    return "kept on purpose (keep_container: true)";
  if (options.runId) return undefined;
  const host = labels[CONTAINER_LABELS.host];
  const pid = Number(labels[CONTAINER_LABELS.pid]);
  if (host && host !== os.hostname()) return `started on another machine (${host})`;
  if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) return `its run is still going (pid ${pid})`;
  return undefined;
}

/**
 * `swerun cleanup`: removes the containers (found by label) that runs left behind when they crashed or were
 * killed, listing each one, on every daemon given (`--docker-host`, repeatable) or DOCKER_HOST's. Kept
 * containers and those of live runs stay unless `all` is set. Returns the exit code (1 when a container could
 * not be removed or, with several daemons, one could not be reached).
 */
export async function cleanContainers(options: CleanupOptions = {}): Promise<number> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const endpoints = cleanupEndpoints(options);
  if (endpoints.length === 1 && endpoints[0]) return cleanHost(endpoints[0], options, print);
  let code = 0;
  for (const endpoint of endpoints) {
    print(`Docker host ${endpoint.host}:`);
    try {
      code = Math.max(code, await cleanHost(endpoint, options, (line) => print(`  ${line}`)));
    } catch (error) {
      code = 1;
      print(`  could not reach ${endpoint.host}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return code;
}

/** The cleanup of one daemon; throws when it cannot be reached. */
async function cleanHost(
  endpoint: DockerEndpoint,
  options: CleanupOptions,
  print: (line: string) => void,
): Promise<number> {
  const docker = await connectDocker(endpoint);
  try {
    const label = options.runId ? `${CONTAINER_LABELS.runId}=${options.runId}` : CONTAINER_LABELS.runId;
    const containers = await docker.listContainers({ all: true, filters: { label: [label] } });
    let removed = 0;
    let skipped = 0;
    let failed = 0;
    for (const container of containers.sort((a, b) => a.Created - b.Created)) {
      const name = (container.Names[0] ?? container.Id).replace(/^\//, "");
      const labels = container.Labels;
      const description = `${name}  id ${container.Id.slice(0, 12)}  run ${labels[CONTAINER_LABELS.runId] || "-"}  instance ${labels[CONTAINER_LABELS.instanceId] || "-"}  age ${age(container.Created)}  (${container.State})`;
      const keep = reasonToKeep(container, options);
      if (keep) {
        skipped++;
        print(`skipped ${description}: ${keep}`);
        continue;
      }
      if (options.dryRun) {
        removed++;
        print(`would remove ${description}`);
        continue;
      }
      try {
        await docker.getContainer(container.Id).remove({ force: true });
        removed++;
        print(`removed ${description}`);
      } catch (error) {
        const status = (error as { statusCode?: number }).statusCode;
        if (status === 404 || status === 409) {
          removed++;
          print(`removed ${description} (it was already going away)`);
        } else {
          failed++;
          print(`could not remove ${description}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
    const verb = options.dryRun ? "would remove" : "removed";
    const hint = skipped && !options.all ? ` (${skipped} skipped; --all removes them too)` : "";
    print(
      containers.length === 0
        ? `No swerun containers${options.runId ? ` of run ${options.runId}` : ""} found.`
        : `${removed} ${verb}, ${failed} failed${hint}.`,
    );
    return failed ? 1 : 0;
  } finally {
    closeDockerClient(docker);
  }
}

/**
 * For a batch starting in a folder an earlier run `runId` wrote: removes that run's containers (a kill
 * leaves them running, or `Created` and never started, which `--rm` does not remove), kept ones excepted,
 * on DOCKER_HOST's daemon or on each of `hosts`. Returns one line per container removed or not removable.
 */
export async function removeLeftoverContainers(runId: string, hosts?: DockerHostConfig[]): Promise<string[]> {
  const lines: string[] = [];
  const keep = (line: string) => /^(removed|could not remove) /.test(line);
  if (!hosts || hosts.length === 0) {
    await cleanContainers({ runId, skipKept: true, print: (line) => keep(line) && lines.push(line) });
    return lines;
  }
  for (const host of hosts) {
    const where = hosts.length > 1 ? ` on ${host.host}` : "";
    try {
      await cleanContainers({
        runId,
        skipKept: true,
        hosts: [host],
        print: (line) => keep(line) && lines.push(`${line}${where}`),
      });
    } catch (error) {
      lines.push(`could not reach ${host.host}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return lines;
}
