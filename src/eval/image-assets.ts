import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../util/atomic-write.js";
import { namingFile } from "../util/file-error.js";
import { makeDirsSync } from "../util/make-dirs.js";
import { pathInside } from "../util/safe-path.js";
import { MARKERS } from "./harness-constants.js";

/**
 * A binary file a text patch cannot carry (a Multimodal row's `image_assets`, e.g. an expected.png
 * rendering baseline): its path in the repository, and where to fetch it when no task repo holds it.
 */
export interface ImageAsset {
  path: string;
  url?: string;
}

/** The `image_assets` keys whose files the harness restores, in its order (`problem_statement` is not). */
const RESTORED_KEYS = ["test_patch", "patch"] as const;

/**
 * A row's `image_assets` (a JSON string in the hub's datasets, an object in local ones) as the harness reads
 * it: the entries of `test_patch`, then `patch`, that have a `path`. Throws a message naming the field when
 * the value is not that shape (the harness fails such an instance; swerun says so before anything runs).
 */
export function parseImageAssets(raw: unknown): ImageAsset[] {
  if (raw === undefined || raw === null || raw === "") return [];
  let value = raw;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      throw new Error("image_assets is not JSON");
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new Error("image_assets must be an object ({test_patch: [...], patch: [...]})");
  const assets: ImageAsset[] = [];
  for (const key of RESTORED_KEYS) {
    const entries = (value as Record<string, unknown>)[key];
    if (entries === undefined || entries === null) continue;
    if (!Array.isArray(entries)) throw new Error(`image_assets.${key} must be a list`);
    entries.forEach((entry, index) => {
      if (typeof entry !== "object" || entry === null || Array.isArray(entry))
        throw new Error(`image_assets.${key}.${index} must be an object with path (and url)`);
      const { path, url } = entry as { path?: unknown; url?: unknown };
      if (!path) return;
      if (typeof path !== "string" || (url !== undefined && url !== null && typeof url !== "string"))
        throw new Error(`image_assets.${key}.${index}: path and url must be strings`);
      if (
        path.startsWith("/") ||
        path.includes("\0") ||
        path.split("/").some((step) => step === ".." || step === "")
      )
        throw new Error(
          `image_assets.${key}.${index}.path ${JSON.stringify(path)} is not a file path inside the repository`,
        );
      assets.push({ path, ...(url ? { url } : {}) });
    });
  }
  return assets;
}

/** Where a task repo keeps an instance's asset: `tasks/<id>/test_assets/<path>`. */
export function taskRepoAssetPath(taskRepo: string, instanceId: string, path: string): string {
  return pathInside(join(taskRepo, "tasks", instanceId, "test_assets"), path);
}

/** The asset's file name in the staging folders: its path with `/` as `__`. */
export function flatName(path: string): string {
  return path.replaceAll("/", "__");
}

/** The eval-script line that puts a staged asset in place, as the harness writes it (paths unquoted). */
export function restoreCommand(path: string): string {
  return `mkdir -p $(dirname ${path}) && cp /image_assets/${flatName(path)} ${path}`;
}

/**
 * The eval script with the restore lines just before the line holding the test-output start marker (after
 * the script's own checkout and test-patch apply, so they land with the patch), as the harness inserts
 * them; a script without the marker gets them appended.
 */
export function injectAssetRestore(script: string, commands: string[]): string {
  if (commands.length === 0) return script;
  const lines = script.split("\n");
  const at = lines.findIndex((line) => line.includes(MARKERS.start));
  if (at === -1) return `${script}\n${commands.join("\n")}`;
  return [...lines.slice(0, at), ...commands, ...lines.slice(at)].join("\n");
}

/** An asset read for staging. */
export interface StagedAsset {
  path: string;
  flat: string;
  data: Buffer;
  fromTaskRepo: boolean;
}

/**
 * Reads each asset as the harness does: from the task repo when it holds the file, else from its URL (60 s);
 * an asset found in neither is skipped with a warning. The files are also written to `<logDir>/image_assets/`
 * (each atomically; one that cannot be written throws a FileWriteError naming it).
 */
export async function stageImageAssets(options: {
  instanceId: string;
  assets: ImageAsset[];
  logDir: string;
  taskRepo?: string;
  warn: (message: string) => void;
  signal?: AbortSignal;
}): Promise<StagedAsset[]> {
  const { instanceId, assets, taskRepo, warn } = options;
  if (assets.length === 0) return [];
  const staging = join(options.logDir, "image_assets");
  namingFile(staging, () => makeDirsSync(staging));
  const staged: StagedAsset[] = [];
  for (const asset of assets) {
    const local = taskRepo ? taskRepoAssetPath(taskRepo, instanceId, asset.path) : undefined;
    const fromTaskRepo = local !== undefined && existsSync(local) && statSync(local).isFile();
    let data: Buffer | undefined;
    if (fromTaskRepo) data = readFileSync(local);
    else if (!asset.url) warn(`No asset for ${instanceId} at ${asset.path}`);
    else {
      try {
        const timeout = AbortSignal.timeout(60_000);
        const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
        const response = await fetch(asset.url, { signal });
        if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
        data = Buffer.from(await response.arrayBuffer());
      } catch (error) {
        warn(`Could not fetch image asset ${asset.url}: ${(error as Error).message}`);
      }
    }
    if (!data) continue;
    const flat = flatName(asset.path);
    writeFileAtomic(pathInside(staging, flat), [data]);
    staged.push({ path: asset.path, flat, data, fromTaskRepo });
  }
  return staged;
}

/** The harness's log line after staging. */
export function stagedLine(staged: StagedAsset[]): string {
  const fromRepo = staged.filter((asset) => asset.fromTaskRepo).length;
  return `Staged ${staged.length} patch asset(s) for restore after git apply (${fromRepo} from the local mirror, ${staged.length - fromRepo} fetched)`;
}
