import os from "node:os";
import type Docker from "dockerode";
import { closeDockerClient, connectDocker, hostEndpoint } from "../environments/docker/client.js";
import { removeImage } from "../environments/docker/images.js";
import {
  type ImageLedger,
  type LedgerImage,
  readLedger,
  readLedgers,
  saveLedger,
} from "../swebench/image-ledger.js";
import { processAlive } from "../util/process-alive.js";

export interface CleanupImagesOptions {
  /** Only the images this run pulled. */
  runId?: string;
  /** Also the images of runs still going. */
  all?: boolean;
  /** List what would be removed, remove nothing. */
  dryRun?: boolean;
  print?: (line: string) => void;
}

/** Why a ledger's images are left alone without --all or --run-id: its run still goes on this machine. */
function liveRun(ledger: ImageLedger): string | undefined {
  if (ledger.hostname !== os.hostname() || !processAlive(ledger.pid) || ledger.pid === process.pid)
    return undefined;
  return `its run is still going (pid ${ledger.pid})`;
}

/**
 * `swerun cleanup --images`: removes the images swerun batches pulled (recorded on this machine as they
 * pulled them, see image-ledger.ts), each only while its name is still the image the run pulled and no
 * container uses it, listing each. Never touches other images. Returns 1 when a daemon could not be reached.
 */
export async function cleanupImages(options: CleanupImagesOptions = {}): Promise<number> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const ledgers = options.runId ? [readLedger(options.runId)].flatMap((l) => (l ? [l] : [])) : readLedgers();
  if (ledgers.length === 0) {
    print(`No images pulled by ${options.runId ? `run ${options.runId}` : "swerun runs"} are recorded.`);
    return 0;
  }
  const clients = new Map<string, Promise<Docker>>();
  const client = (host: string) => {
    let docker = clients.get(host);
    if (!docker) {
      docker = connectDocker(hostEndpoint({ host, workers: 1 }, "the run's record"));
      clients.set(host, docker);
    }
    return docker;
  };
  let removed = 0;
  let left = 0;
  let code = 0;
  try {
    for (const ledger of ledgers) {
      const live = options.all || options.runId ? undefined : liveRun(ledger);
      if (live) {
        left += ledger.images.length;
        print(`skipped the ${ledger.images.length} image(s) of run ${ledger.run_id}: ${live}`);
        continue;
      }
      const remaining: LedgerImage[] = [];
      for (const entry of ledger.images) {
        const what = `${entry.image} (run ${ledger.run_id}, ${entry.host})`;
        let docker: Docker;
        try {
          docker = await client(entry.host);
        } catch (error) {
          code = 1;
          left++;
          remaining.push(entry);
          print(
            `could not reach ${entry.host} for ${entry.image}: ${error instanceof Error ? error.message : String(error)}`,
          );
          continue;
        }
        if (options.dryRun) {
          removed++;
          print(`would remove ${what}`);
          continue;
        }
        const outcome = await removeImage(docker, entry.image, entry.id).catch((error: unknown) => {
          print(error instanceof Error ? error.message : String(error));
          return "failed" as const;
        });
        if (outcome === "removed") {
          removed++;
          print(`removed ${what}`);
        } else if (outcome === "in use" || outcome === "failed") {
          left++;
          remaining.push(entry);
          if (outcome === "in use") print(`left ${what}: a container uses it`);
        } else if (outcome === "changed") {
          print(`left ${what}: the name is another image now, not the one the run pulled`);
        } else {
          print(`${what}: already gone`);
        }
      }
      if (!options.dryRun) saveLedger({ ...ledger, images: remaining });
    }
  } finally {
    for (const docker of clients.values()) docker.then(closeDockerClient, () => {});
  }
  print(`${removed} ${options.dryRun ? "would be removed" : "removed"}, ${left} left.`);
  return code;
}
