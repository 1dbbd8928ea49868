import { readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import envPaths from "env-paths";
import { writeFileAtomic } from "../util/atomic-write.js";

/**
 * An image a run pulled: its name, the daemon it is on, and the image id it was (so a re-pulled name is left
 * alone). A pull is listed before it starts (`pulling`, no id yet), so an image whose pull a kill cut short of
 * the ledger's update is still the run's: a resumed batch takes it back, `swerun cleanup --images` removes it.
 */
export interface LedgerImage {
  image: string;
  /** The daemon's address (unix://..., tcp://..., ssh://...). */
  host: string;
  /** The image id; "" while `pulling`. */
  id: string;
  /** When the pull started (ISO time): the pull had not ended when the ledger was written last. */
  pulling?: string;
}

/** What one batch run pulled, kept on this machine so `swerun cleanup --images` finds it without the run folder. */
export interface ImageLedger {
  run_id: string;
  /** The process and machine of the batch that wrote it last, to leave a live run's images alone. */
  pid: number;
  hostname: string;
  /** The run folder. */
  folder: string;
  images: LedgerImage[];
}

/** Where ledgers are kept: `SWERUN_STATE_DIR/images`, else the user's data directory (~/.local/share/swerun/images). */
export function ledgerDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.SWERUN_STATE_DIR || envPaths("swerun", { suffix: "" }).data, "images");
}

const fileOf = (runId: string) => join(ledgerDir(), `${runId.replace(/[^\w.-]+/g, "_")}.json`);

export function readLedger(runId: string): ImageLedger | undefined {
  try {
    return JSON.parse(readFileSync(fileOf(runId), "utf8")) as ImageLedger;
  } catch {
    return undefined;
  }
}

/** Every ledger on this machine. */
export function readLedgers(): ImageLedger[] {
  let names: string[] = [];
  try {
    names = readdirSync(ledgerDir()).filter((name) => name.endsWith(".json"));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    try {
      return [JSON.parse(readFileSync(join(ledgerDir(), name), "utf8")) as ImageLedger];
    } catch {
      return [];
    }
  });
}

/** Writes the run's ledger atomically (by this process, on this machine). */
export function writeLedger(runId: string, folder: string, images: LedgerImage[]): void {
  saveLedger({ run_id: runId, pid: process.pid, hostname: os.hostname(), folder, images });
}

/** Writes a ledger as it is, atomically; one listing no image is deleted. */
export function saveLedger(ledger: ImageLedger): void {
  if (ledger.images.length === 0) rmSync(fileOf(ledger.run_id), { force: true });
  else writeFileAtomic(fileOf(ledger.run_id), [`${JSON.stringify(ledger, null, 2)}\n`]);
}
