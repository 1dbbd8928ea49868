import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import {
  baseRootfs,
  findProgram,
  imageExists,
  importImage,
  RootfsCollector,
  sha,
} from "../../src/fixture-images/rootfs.js";

import { addTestbed, once } from "./image-build.js";

export { rootfsTar } from "../../src/fixture-images/rootfs.js";

/**
 * Test images built offline, in seconds, from this machine's own files: a root filesystem holding bash,
 * coreutils, git and their shared libraries, imported with the Engine API (`docker import`). Tags carry a
 * hash of the content, so an image is built once and reused while the inputs stay the same.
 */
export interface TestImages {
  /** bash, sh, coreutils, grep, sed, git, find, ps, ..., perl with its POSIX module (as Debian's perl-base). */
  base: string;
  /** The base without perl: its Docker session runs the shell loop. */
  noPerl: string;
  /** The base plus a SWE-bench-shaped git repository at /testbed with a bug and a failing test. */
  swebench: string;
  /**
   * No /bin/sh, no /bin at all: `sleep`, `cat` and `grep` in /usr/bin, bash only as /opt/shell/bash, PATH
   * holding both; for the session's fallback to exec mode.
   */
  noShell: string;
}

/** Bump when the recipe changes, so old tags are not reused. */
const RECIPE = "swerun-test-images-4";
/** The SWE-bench-shaped task: calc.sh subtracts wrongly, test.sh fails until it is fixed. */
export const SWEBENCH_FILES: Record<string, string> = {
  "calc.sh": `#!/bin/bash
# calc.sh OP A B: prints the result of A OP B for OP in add, sub, mul.
case "$1" in
  add) echo $(( $2 + $3 )) ;;
  sub) echo $(( $2 + $3 )) ;;
  mul) echo $(( $2 * $3 )) ;;
  *) echo "unknown operation: $1" >&2; exit 2 ;;
esac
`,
  "test.sh": `#!/bin/bash
# Runs the calculator's tests; exits 1 when one fails.
cd "$(dirname "$0")"
failed=0
check() {
  local got
  got=$(./calc.sh "$1" "$2" "$3")
  if [ "$got" = "$4" ]; then echo "ok   $1 $2 $3 = $4"; else echo "FAIL $1 $2 $3: expected $4, got $got"; failed=1; fi
}
check add 2 3 5
check sub 5 3 2
check mul 4 3 12
exit $failed
`,
  "README.md": "# calc\n\nA tiny calculator. Run ./test.sh to test it.\n",
};

/** Commits everything in `dir` as a new repository with a fixed identity and date, so its content hash is stable. */
export function commitFixedRepo(dir: string, message: string): void {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: "swerun",
    GIT_AUTHOR_EMAIL: "swerun@example.com",
    GIT_COMMITTER_NAME: "swerun",
    GIT_COMMITTER_EMAIL: "swerun@example.com",
    GIT_AUTHOR_DATE: "2024-01-01T00:00:00Z",
    GIT_COMMITTER_DATE: "2024-01-01T00:00:00Z",
  };
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env, stdio: "ignore" });
  git("-c", "init.defaultBranch=main", "init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", message);
}

/** A git repository holding SWEBENCH_FILES, committed once, made with this machine's git. */
export function swebenchRepo(): string {
  const dir = mkdtempSync(join(os.tmpdir(), "swerun-testbed-"));
  for (const [name, content] of Object.entries(SWEBENCH_FILES)) {
    writeFileSync(join(dir, name), content, { mode: name.endsWith(".sh") ? 0o755 : 0o644 });
  }
  commitFixedRepo(dir, "calc: add, sub, mul");
  return dir;
}

const building = new WeakMap<Docker, Promise<TestImages>>();

/** Builds the test images unless images with the same content hash exist already; once per process. */
export function ensureTestImages(
  docker: Docker,
  log: (line: string) => void = () => {},
): Promise<TestImages> {
  return once(building, docker, () => buildTestImages(docker, log));
}

async function buildTestImages(docker: Docker, log: (line: string) => void): Promise<TestImages> {
  const baseTar = baseRootfs().tar();
  const baseHash = sha(RECIPE, baseTar);
  const base = `swerun-test/base:${baseHash}`;
  if (!(await imageExists(docker, base))) {
    const started = Date.now();
    await importImage(docker, baseTar, "swerun-test/base", baseHash);
    log(`built ${base} (${(baseTar.length / 1e6).toFixed(1)} MB) in ${Date.now() - started} ms`);
  }
  const swebenchHash = sha(baseHash, JSON.stringify(SWEBENCH_FILES));
  const swebench = `swerun-test/swebench-calc:${swebenchHash}`;
  if (!(await imageExists(docker, swebench))) {
    const started = Date.now();
    const rootfs = baseRootfs();
    addTestbed(rootfs, swebenchRepo());
    await importImage(docker, rootfs.tar(), "swerun-test/swebench-calc", swebenchHash);
    log(`built ${swebench} in ${Date.now() - started} ms`);
  }
  const noPerlTar = baseRootfs({ perl: false }).tar();
  const noPerlHash = sha(RECIPE, noPerlTar);
  const noPerl = `swerun-test/no-perl:${noPerlHash}`;
  if (!(await imageExists(docker, noPerl))) {
    const started = Date.now();
    await importImage(docker, noPerlTar, "swerun-test/no-perl", noPerlHash);
    log(`built ${noPerl} (${(noPerlTar.length / 1e6).toFixed(1)} MB) in ${Date.now() - started} ms`);
  }
  const noShellRootfs = new RootfsCollector();
  for (const name of ["sleep", "cat", "grep"]) {
    const path = findProgram(name);
    if (!path) throw new Error(`building the no-shell test image needs \`${name}\` on this machine`);
    noShellRootfs.addProgram(path, `usr/bin/${name}`);
  }
  const bash = findProgram("bash");
  if (!bash) throw new Error("building the no-shell test image needs `bash` on this machine");
  noShellRootfs.addProgram(bash, "opt/shell/bash");
  for (const dir of ["proc", "sys", "dev", "etc", "root"]) noShellRootfs.addDirs(dir);
  noShellRootfs.entries.set("tmp", { type: "dir", path: "tmp", mode: 0o1777 });
  const noShellTar = noShellRootfs.tar();
  const noShellHash = sha(RECIPE, noShellTar);
  const noShell = `swerun-test/no-shell:${noShellHash}`;
  if (!(await imageExists(docker, noShell))) {
    const started = Date.now();
    await importImage(docker, noShellTar, "swerun-test/no-shell", noShellHash, [
      "ENV PATH=/opt/shell:/usr/bin",
      'CMD ["sleep", "infinity"]',
    ]);
    log(`built ${noShell} in ${Date.now() - started} ms`);
  }
  return { base, noPerl, swebench, noShell };
}
