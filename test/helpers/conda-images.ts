import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
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
import { commitFixedRepo, SWEBENCH_FILES } from "./docker-images.js";

/** Bump when the recipe changes, so old tags are not reused. */
const RECIPE = "swerun-conda-image-1";
const PYTHON = "/usr/bin/python3";
/** The prefix of the official images' conda (its `bin` is on the image's PATH, as there). */
export const CONDA_ROOT = "/opt/miniconda3";
/** The testbed env's prefix, which `/root/.bashrc` activates. */
export const TESTBED_PREFIX = `${CONDA_ROOT}/envs/testbed`;
/** A module only the testbed env has (as the repository's dependencies are only in the testbed env). */
export const TESTBED_ONLY_MODULE = "calcdeps";
const STDLIB_SKIP = new Set([
  "test",
  "idlelib",
  "tkinter",
  "turtledemo",
  "ensurepip",
  "lib2to3",
  "pydoc_data",
  "distutils",
  "unittest",
  "asyncio",
  "email",
  "xml",
  "multiprocessing",
  "sqlite3",
  "__pycache__",
]);

/**
 * `conda.sh` as the image's `/root/.bashrc` sources it: a `conda` shell function whose `activate NAME`
 * puts the env's `bin` first on PATH and sets CONDA_PREFIX / CONDA_DEFAULT_ENV, as conda's own does.
 */
const CONDA_SH = `conda() {
  if [ "$1" = activate ]; then
    CONDA_PREFIX=${CONDA_ROOT}/envs/$2
    [ -d "$CONDA_PREFIX" ] || { echo "conda: no env $2" >&2; return 1; }
    export CONDA_PREFIX CONDA_DEFAULT_ENV=$2 PATH="$CONDA_PREFIX/bin:$PATH"
  fi
}
`;

function addWalk(rootfs: RootfsCollector, dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (STDLIB_SKIP.has(entry.name)) continue;
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

function pythonVersion(): string {
  return execFileSync(PYTHON, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], {
    encoding: "utf8",
  }).trim();
}

/** This machine's python3 with (most of) its standard library and lib-dynload modules. */
function addPython(rootfs: RootfsCollector, version: string): void {
  const stdlib = `/usr/lib/python${version}`;
  rootfs.add(PYTHON);
  addWalk(rootfs, stdlib);
  const dynload = join(stdlib, "lib-dynload");
  const modules = readdirSync(dynload).map((name) => join(dynload, name));
  for (const lib of sharedLibraries([PYTHON, ...modules])) rootfs.add(lib);
}

/**
 * One python prefix laid out as a virtual environment over the image's python3 (`pyvenv.cfg` makes
 * `sys.prefix` the prefix itself), with `python`/`python3` in its `bin` and `modules` in its site-packages.
 */
function addPrefix(
  rootfs: RootfsCollector,
  prefix: string,
  version: string,
  modules: Record<string, string>,
) {
  const at = prefix.replace(/^\//, "");
  rootfs.addFile(
    `${at}/pyvenv.cfg`,
    `home = /usr/bin\ninclude-system-site-packages = false\nversion = ${version}\n`,
  );
  rootfs.addDirs(`${at}/bin`);
  for (const name of ["python", "python3"])
    rootfs.entries.set(`${at}/bin/${name}`, { type: "symlink", path: `${at}/bin/${name}`, target: PYTHON });
  const site = `${at}/lib/python${version}/site-packages`;
  rootfs.addDirs(site);
  for (const [name, source] of Object.entries(modules)) rootfs.addFile(`${site}/${name}.py`, source);
}

const building = new WeakMap<Docker, Promise<string>>();

/**
 * An image laid out like the official SWE-bench images, built offline from this machine's files: a conda
 * base at /opt/miniconda3 whose `bin` is on the image's PATH, a `testbed` env under its `envs/` that
 * `/root/.bashrc` activates (`source .../conda.sh && conda activate testbed`, as the SWE-bench env images
 * write it), and the calc repository at /testbed. Only the testbed env has TESTBED_ONLY_MODULE.
 */
export function ensureCondaImage(docker: Docker, log: (line: string) => void = () => {}): Promise<string> {
  let promise = building.get(docker);
  if (!promise) {
    promise = buildCondaImage(docker, log);
    building.set(docker, promise);
  }
  return promise;
}

async function buildCondaImage(docker: Docker, log: (line: string) => void): Promise<string> {
  if (!existsSync(PYTHON)) throw new Error(`the conda-layout test image needs ${PYTHON} on this machine`);
  const version = pythonVersion();
  const hash = sha(RECIPE, version, JSON.stringify(SWEBENCH_FILES), execFileSync(PYTHON, ["--version"]));
  const tag = `swerun-test/conda-calc:${hash}`;
  if (await imageExists(docker, tag)) return tag;
  const started = Date.now();
  const rootfs = baseRootfs();
  addPython(rootfs, version);
  addPrefix(rootfs, CONDA_ROOT, version, {});
  addPrefix(rootfs, TESTBED_PREFIX, version, { [TESTBED_ONLY_MODULE]: "VERSION = '1.0'\n" });
  rootfs.addFile(`${CONDA_ROOT.slice(1)}/etc/profile.d/conda.sh`, CONDA_SH);
  rootfs.addFile("root/.bashrc", `source ${CONDA_ROOT}/etc/profile.d/conda.sh && conda activate testbed\n`);
  const repo = mkdtempSync(join(os.tmpdir(), "swerun-conda-testbed-"));
  try {
    for (const [name, content] of Object.entries(SWEBENCH_FILES))
      writeFileSync(join(repo, name), content, { mode: name.endsWith(".sh") ? 0o755 : 0o644 });
    commitFixedRepo(repo, "calc: add, sub, mul");
    rootfs.addTree(repo, "testbed");
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
  const tar = rootfs.tar();
  await importImage(docker, tar, "swerun-test/conda-calc", hash, [
    `ENV PATH=${CONDA_ROOT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    "WORKDIR /testbed",
  ]);
  log(`built ${tag} (${(tar.length / 1e6).toFixed(1)} MB) in ${Date.now() - started} ms`);
  return tag;
}
