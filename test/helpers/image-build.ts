import { execFileSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import {
  baseRootfs,
  imageExists,
  importImage,
  type RootfsCollector,
} from "../../src/fixture-images/rootfs.js";

// The steps the offline test images share (docker-images.ts, eval-images.ts, conda-images.ts,
// language-images.ts): each image is the base test image's programs plus files of this machine, built once
// per content hash and then reused.

/** This machine's python3, which the Python test images copy. */
export const PYTHON = "/usr/bin/python3";

/** What `build` promises for `key` (a Docker client), started on the first call and shared by later ones. */
export function once<K extends object, V>(
  started: WeakMap<K, Promise<V>>,
  key: K,
  build: () => Promise<V>,
): Promise<V> {
  let promise = started.get(key);
  if (!promise) {
    promise = build();
    started.set(key, promise);
  }
  return promise;
}

/**
 * The image `repository:hash`: the existing one, or one built from the base test image's root filesystem
 * that `fill` adds to, imported with the Dockerfile `changes`; a line to `log` says what was built.
 */
export async function buildImage(
  docker: Docker,
  image: { repository: string; hash: string; changes?: string[] },
  log: (line: string) => void,
  fill: (rootfs: RootfsCollector) => void,
): Promise<string> {
  const tag = `${image.repository}:${image.hash}`;
  if (await imageExists(docker, tag)) return tag;
  const started = Date.now();
  const rootfs = baseRootfs();
  fill(rootfs);
  const tar = rootfs.tar();
  await importImage(docker, tar, image.repository, image.hash, image.changes);
  log(`built ${tag} (${(tar.length / 1e6).toFixed(1)} MB) in ${Date.now() - started} ms`);
  return tag;
}

/**
 * Adds the git checkout `repo` (a temporary folder, removed afterwards) at /testbed, after `prepare` has used
 * it (a warm build cache, say).
 */
export function addTestbed(
  rootfs: RootfsCollector,
  repo: string,
  prepare: (repo: string) => void = () => {},
): void {
  try {
    prepare(repo);
    rootfs.addTree(repo, "testbed");
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

/** Shared libraries of the programs and libraries at `paths`, from one `ldd` call. */
export function sharedLibraries(paths: string[]): string[] {
  let output = "";
  try {
    output = execFileSync("ldd", paths, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch (error) {
    output = String((error as { stdout?: unknown }).stdout ?? "");
  }
  return [...output.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((match) => match[1] ?? "").filter(Boolean);
}

/** Every file under `dir` (following no symlinked folders), except entries named in `skip`, at any depth. */
export function files(dir: string, skip: Set<string> = new Set()): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...files(path, skip));
    else found.push(path);
  }
  return found;
}

export function addAll(rootfs: RootfsCollector, paths: string[]): void {
  for (const path of paths) rootfs.add(path);
}

/** The major.minor version of PYTHON ("3.11"). */
export function pythonVersion(): string {
  return execFileSync(PYTHON, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], {
    encoding: "utf8",
  }).trim();
}

/** The folder of PYTHON's standard library. */
export function stdlibDir(version: string): string {
  return `/usr/lib/python${version}`;
}

/**
 * PYTHON, the standard-library files `stdlib` lists, and the shared libraries python3 and its lib-dynload
 * modules need.
 */
export function addPython(rootfs: RootfsCollector, version: string, stdlib: string[]): void {
  rootfs.add(PYTHON);
  addAll(rootfs, stdlib);
  const dynload = join(stdlibDir(version), "lib-dynload");
  const modules = readdirSync(dynload).map((name) => join(dynload, name));
  addAll(rootfs, sharedLibraries([PYTHON, ...modules]));
}
