import { execFileSync } from "node:child_process";
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import {
  baseRootfs,
  imageExists,
  importImage,
  type RootfsCollector,
  sha,
} from "../../src/fixture-images/rootfs.js";
import { packageRoot } from "../../src/util/package-root.js";
import { commitFixedRepo } from "./docker-images.js";

/** The grading tests' repository: `add` subtracts; its tests run under pytest (test/fixtures/eval/docker). */
export const EVAL_FIXTURES = join(packageRoot(), "test", "fixtures", "eval", "docker");
const TESTBED = join(EVAL_FIXTURES, "testbed");

/** Bump when the recipe changes, so old tags are not reused. */
const RECIPE = "swerun-eval-image-1";
const PYTHON = "/usr/bin/python3";
/** Parts of the standard library that pytest never needs. */
const STDLIB_SKIP = new Set([
  "test",
  "idlelib",
  "tkinter",
  "turtledemo",
  "ensurepip",
  "lib2to3",
  "pydoc_data",
]);
/** What Debian's python3-pytest needs from dist-packages. */
const PYTEST_PACKAGES = ["pytest", "_pytest", "pluggy", "iniconfig", "packaging", "attr", "py.py"];

function addWalk(rootfs: RootfsCollector, dir: string, skip: Set<string> = new Set()): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory() && !lstatSync(path).isSymbolicLink()) addWalk(rootfs, path);
    else rootfs.add(path);
  }
}

function sharedLibraries(paths: string[]): string[] {
  let output = "";
  try {
    output = execFileSync("ldd", paths, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch (error) {
    output = String((error as { stdout?: unknown }).stdout ?? "");
  }
  return [...output.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((match) => match[1] ?? "").filter(Boolean);
}

/** Debian's python3 (with its standard library and lib-dynload modules) and python3-pytest, from this machine. */
function addPython(rootfs: RootfsCollector): void {
  if (!existsSync(PYTHON) || !existsSync("/usr/lib/python3/dist-packages/pytest"))
    throw new Error(
      "the grading test image needs Debian's python3 and python3-pytest (apt-get install python3-pytest)",
    );
  const version = execFileSync(PYTHON, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], {
    encoding: "utf8",
  }).trim();
  const stdlib = `/usr/lib/python${version}`;
  rootfs.add(PYTHON);
  addWalk(rootfs, stdlib, STDLIB_SKIP);
  for (const name of PYTEST_PACKAGES) {
    const path = join("/usr/lib/python3/dist-packages", name);
    if (!existsSync(path)) continue;
    if (lstatSync(path).isDirectory()) addWalk(rootfs, path);
    else rootfs.add(path);
  }
  const dynload = join(stdlib, "lib-dynload");
  const modules = readdirSync(dynload).map((name) => join(dynload, name));
  for (const lib of sharedLibraries([PYTHON, ...modules])) rootfs.add(lib);
  for (const program of ["patch", "tail"]) {
    const path = ["/usr/bin", "/bin"]
      .map((dir) => join(dir, program))
      .find((candidate) => existsSync(candidate));
    if (path) rootfs.add(path);
  }
}

/** TESTBED committed as a git repository (fixed identity and dates, so the image's content hash is stable). */
function testbedRepo(): string {
  const dir = mkdtempSync(join(os.tmpdir(), "swerun-eval-testbed-"));
  cpSync(TESTBED, dir, { recursive: true });
  commitFixedRepo(dir, "mathx: add, mul, neg");
  return dir;
}

function testbedHash(): string {
  const parts: string[] = [RECIPE];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else parts.push(path.slice(TESTBED.length), execFileSync("cat", [path], { encoding: "latin1" }));
    }
  };
  walk(TESTBED);
  return sha(...parts);
}

const building = new WeakMap<Docker, Promise<string>>();

/**
 * The grading tests' image: the base test image's programs, Debian's python3 + pytest, `patch`, and the
 * mathx repository at /testbed. Built offline once per content hash (a few seconds), then reused.
 */
export function ensureEvalImage(docker: Docker, log: (line: string) => void = () => {}): Promise<string> {
  let promise = building.get(docker);
  if (!promise) {
    promise = buildEvalImage(docker, log);
    building.set(docker, promise);
  }
  return promise;
}

async function buildEvalImage(docker: Docker, log: (line: string) => void): Promise<string> {
  const hash = sha(testbedHash(), execFileSync(PYTHON, ["--version"], { encoding: "utf8" }));
  const tag = `swerun-test/eval-mathx:${hash}`;
  if (await imageExists(docker, tag)) return tag;
  const started = Date.now();
  const rootfs = baseRootfs();
  addPython(rootfs);
  const repo = testbedRepo();
  try {
    rootfs.addTree(repo, "testbed");
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
  const tar = rootfs.tar();
  await importImage(docker, tar, "swerun-test/eval-mathx", hash);
  log(`built ${tag} (${(tar.length / 1e6).toFixed(1)} MB) in ${Date.now() - started} ms`);
  return tag;
}
