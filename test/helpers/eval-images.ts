import { execFileSync } from "node:child_process";
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { type RootfsCollector, sha } from "../../src/fixture-images/rootfs.js";
import { packageRoot } from "../../src/util/package-root.js";
import { commitFixedRepo } from "./docker-images.js";
import {
  addAll,
  addPython,
  addTestbed,
  buildImage,
  files,
  once,
  PYTHON,
  pythonVersion,
  stdlibDir,
} from "./image-build.js";

/** The grading tests' repository: `add` subtracts; its tests run under pytest (test/fixtures/eval/docker). */
export const EVAL_FIXTURES = join(packageRoot(), "test", "fixtures", "eval", "docker");
const TESTBED = join(EVAL_FIXTURES, "testbed");

/** Bump when the recipe changes, so old tags are not reused. */
const RECIPE = "swerun-eval-image-1";
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

/** The files at `path`: every file below it when it is a folder (not a symlink), else the path itself. */
function filesAt(path: string): string[] {
  return lstatSync(path).isDirectory() ? files(path) : [path];
}

/**
 * Debian's python3 (with its standard library but the top-level entries STDLIB_SKIP names, and lib-dynload
 * modules), python3-pytest, `patch` and `tail`, from this machine.
 */
function addPythonAndTools(rootfs: RootfsCollector): void {
  if (!existsSync(PYTHON) || !existsSync("/usr/lib/python3/dist-packages/pytest"))
    throw new Error(
      "the grading test image needs Debian's python3 and python3-pytest (apt-get install python3-pytest)",
    );
  const version = pythonVersion();
  const stdlib = stdlibDir(version);
  const kept = readdirSync(stdlib).filter((name) => !STDLIB_SKIP.has(name));
  addPython(
    rootfs,
    version,
    kept.flatMap((name) => filesAt(join(stdlib, name))),
  );
  for (const name of PYTEST_PACKAGES) {
    const path = join("/usr/lib/python3/dist-packages", name);
    if (existsSync(path)) addAll(rootfs, filesAt(path));
  }
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
  return once(building, docker, () => buildEvalImage(docker, log));
}

async function buildEvalImage(docker: Docker, log: (line: string) => void): Promise<string> {
  const hash = sha(testbedHash(), execFileSync(PYTHON, ["--version"], { encoding: "utf8" }));
  return buildImage(docker, { repository: "swerun-test/eval-mathx", hash }, log, (rootfs) => {
    addPythonAndTools(rootfs);
    addTestbed(rootfs, testbedRepo());
  });
}
