import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import type Docker from "dockerode";
import { type RootfsCollector, sha } from "../../src/fixture-images/rootfs.js";
import { SWEBENCH_FILES, swebenchRepo } from "./docker-images.js";
import {
  addPython,
  addTestbed,
  buildImage,
  files,
  once,
  PYTHON,
  pythonVersion,
  stdlibDir,
} from "./image-build.js";

/** Bump when the recipe changes, so old tags are not reused. */
const RECIPE = "swerun-conda-image-1";
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
  return once(building, docker, () => buildCondaImage(docker, log));
}

async function buildCondaImage(docker: Docker, log: (line: string) => void): Promise<string> {
  if (!existsSync(PYTHON)) throw new Error(`the conda-layout test image needs ${PYTHON} on this machine`);
  const version = pythonVersion();
  const hash = sha(RECIPE, version, JSON.stringify(SWEBENCH_FILES), execFileSync(PYTHON, ["--version"]));
  const changes = [
    `ENV PATH=${CONDA_ROOT}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    "WORKDIR /testbed",
  ];
  return buildImage(docker, { repository: "swerun-test/conda-calc", hash, changes }, log, (rootfs) => {
    addPython(rootfs, version, files(stdlibDir(version), STDLIB_SKIP));
    addPrefix(rootfs, CONDA_ROOT, version, {});
    addPrefix(rootfs, TESTBED_PREFIX, version, { [TESTBED_ONLY_MODULE]: "VERSION = '1.0'\n" });
    rootfs.addFile(`${CONDA_ROOT.slice(1)}/etc/profile.d/conda.sh`, CONDA_SH);
    rootfs.addFile("root/.bashrc", `source ${CONDA_ROOT}/etc/profile.d/conda.sh && conda activate testbed\n`);
    addTestbed(rootfs, swebenchRepo());
  });
}
