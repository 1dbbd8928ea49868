import os from "node:os";
import type Docker from "dockerode";
import { closeDockerClient, connectDocker, hostEndpoint } from "../environments/docker/client.js";
import { removeImage } from "../environments/docker/images.js";
import { type ImageLedger, type LedgerImage, readLedger, readLedgers, saveLedger } from "../images/ledger.js";
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

/** What cleanup did so far. */
interface Tally {
  removed: number;
  left: number;
  /** 1 once a daemon could not be reached. */
  code: number;
}

/** Removes one image a run pulled (or says it would), telling what happened; returns whether the ledger keeps it. */
async function cleanImage(
  entry: LedgerImage,
  runId: string,
  client: (host: string) => Promise<Docker>,
  options: CleanupImagesOptions,
  tally: Tally,
): Promise<boolean> {
  const print = options.print ?? (() => {});
  const what = `${entry.image} (run ${runId}, ${entry.host})`;
  let docker: Docker;
  try {
    docker = await client(entry.host);
  } catch (error) {
    tally.code = 1;
    tally.left++;
    print(
      `could not reach ${entry.host} for ${entry.image}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return true;
  }
  if (options.dryRun) {
    tally.removed++;
    print(`would remove ${what}`);
    return true;
  }
  const outcome = await removeImage(docker, entry.image, entry.id).catch((error: unknown) => {
    print(error instanceof Error ? error.message : String(error));
    return "failed" as const;
  });
  if (outcome === "removed") {
    tally.removed++;
    print(`removed ${what}`);
    return false;
  }
  if (outcome === "in use" || outcome === "failed") {
    tally.left++;
    if (outcome === "in use") print(`left ${what}: a container uses it`);
    return true;
  }
  if (outcome === "changed") print(`left ${what}: the name is another image now, not the one the run pulled`);
  else print(`${what}: already gone`);
  return false;
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
  const tally: Tally = { removed: 0, left: 0, code: 0 };
  try {
    for (const ledger of ledgers) {
      const live = options.all || options.runId ? undefined : liveRun(ledger);
      if (live) {
        tally.left += ledger.images.length;
        print(`skipped the ${ledger.images.length} image(s) of run ${ledger.run_id}: ${live}`);
        continue;
      }
      const remaining: LedgerImage[] = [];
      for (const entry of ledger.images)
        if (await cleanImage(entry, ledger.run_id, client, { ...options, print }, tally))
          remaining.push(entry);
      if (!options.dryRun) saveLedger({ ...ledger, images: remaining });
    }
  } finally {
    for (const docker of clients.values()) docker.then(closeDockerClient, () => {});
  }
  print(`${tally.removed} ${options.dryRun ? "would be removed" : "removed"}, ${tally.left} left.`);
  return tally.code;
}
