import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { type RootfsCollector, sha } from "../../src/fixture-images/rootfs.js";
import { packageRoot } from "../../src/util/package-root.js";
import { commitFixedRepo } from "./docker-images.js";
import { addAll, addTestbed, buildImage, files, sharedLibraries } from "./image-build.js";

/**
 * SWE-bench Multilingual-shaped test instances in Go (go test), JavaScript (vitest) and Ruby (test-unit):
 * each a small repository whose `add` subtracts, at /testbed in an image built offline from this
 * machine's toolchains (Debian's golang-go and ruby, the node running the tests and swerun's own vitest).
 */
export const LANGUAGES_DIR = join(packageRoot(), "test", "fixtures", "eval", "languages");
export const LANGUAGES = ["go", "js", "ruby"] as const;
export type Language = (typeof LANGUAGES)[number];

/** Bump when a recipe changes, so old tags are not reused. */
const RECIPE = "swerun-lang-image-2";

function need(path: string, what: string): string {
  if (!existsSync(path)) throw new Error(`the ${what} test image needs ${path} (see .ci/run)`);
  return path;
}

/**
 * Debian's go tool (golang-go), the one the image copies. A machine may have another Go first on PATH (such as
 * /usr/local/go): the warm cache and the recipe must come from the same toolchain as the image's.
 */
const DEBIAN_GO = "/usr/lib/go/bin/go";

/** The go tool and compiler of Debian's golang-go, the standard library's sources, and a warm build cache. */
function addGo(rootfs: RootfsCollector, testbed: string): void {
  const goroot = realpathSync(need("/usr/lib/go", "Go")); // /usr/lib/go-1.xx
  rootfs.add("/usr/bin/go");
  rootfs.add(join(goroot, "VERSION"));
  const tools = join(goroot, "pkg", "tool", "linux_amd64");
  addAll(
    rootfs,
    ["compile", "link", "asm", "buildid", "vet"].map((tool) => join(tools, tool)),
  );
  if (existsSync(join(goroot, "pkg", "include"))) addAll(rootfs, files(join(goroot, "pkg", "include")));
  addAll(rootfs, files(realpathSync(join(goroot, "src")), new Set(["cmd", "testdata"])));
  rootfs.add(join(goroot, "src"));
  // The standard library compiled once here, for the same GOROOT and flags: `go test` in the container
  // then compiles only the repository's package.
  const cache = mkdtempSync(join(os.tmpdir(), "swerun-gocache-"));
  try {
    execFileSync(DEBIAN_GO, ["test", "-vet=off", "-count=1", "./..."], {
      cwd: testbed,
      env: { ...process.env, ...GO_ENV, GOCACHE: cache, GOROOT: goroot },
      stdio: "ignore",
    });
  } catch {
    // the tests fail (add subtracts): the standard library is compiled all the same
  }
  rootfs.addTree(cache, "root/.cache/go-build");
  rmSync(cache, { recursive: true, force: true });
}

/** What the Go instance's eval script and the warm cache agree on. */
export const GO_ENV = { CGO_ENABLED: "0", GOFLAGS: "-mod=mod", GOTOOLCHAIN: "local", GOPATH: "/root/go" };

/** The node running this process, and vitest with what it needs at run time from swerun's node_modules. */
function addNode(rootfs: RootfsCollector): void {
  const node = realpathSync(process.execPath);
  rootfs.add(node);
  addAll(rootfs, sharedLibraries([node]));
  const modules = join(packageRoot(), "node_modules");
  const seen = new Set<string>();
  const queue = ["vitest"];
  while (queue.length > 0) {
    const name = queue.pop() as string;
    if (seen.has(name) || name.startsWith("@types/") || name === "undici-types") continue;
    const dir = join(modules, name);
    if (!existsSync(dir)) continue;
    seen.add(name);
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<
      string,
      Record<string, string> | undefined
    >;
    for (const key of ["dependencies", "optionalDependencies", "peerDependencies"])
      queue.push(...Object.keys(manifest[key] ?? {}));
  }
  for (const name of [...seen].sort()) rootfs.addTree(join(modules, name), `testbed/node_modules/${name}`);
  // Native addons (rolldown's, lightningcss's) load their own shared libraries.
  const addons = [...seen].flatMap((name) =>
    files(join(modules, name)).filter((path) => path.endsWith(".node")),
  );
  addAll(rootfs, sharedLibraries(addons));
}

/** Debian's ruby with its standard library, native extensions and bundled gems (test-unit among them). */
function addRuby(rootfs: RootfsCollector): void {
  const ruby = realpathSync(need("/usr/bin/ruby", "Ruby"));
  rootfs.add("/usr/bin/ruby");
  const dirs = [
    "/usr/lib/ruby",
    "/usr/lib/x86_64-linux-gnu/ruby",
    "/usr/share/rubygems-integration",
    "/usr/lib/x86_64-linux-gnu/rubygems-integration",
  ].filter((dir) => existsSync(dir));
  const all = dirs.flatMap((dir) => files(dir));
  addAll(rootfs, all);
  addAll(rootfs, sharedLibraries([ruby, ...all.filter((path) => path.endsWith(".so"))]));
}

/** The language's testbed committed as a git repository (fixed identity and dates). */
function testbedRepo(language: Language): string {
  const dir = mkdtempSync(join(os.tmpdir(), `swerun-${language}-testbed-`));
  cpSync(join(LANGUAGES_DIR, language, "testbed"), dir, { recursive: true });
  commitFixedRepo(dir, `calc (${language}): add, mul`);
  return dir;
}

function recipeHash(language: Language): string {
  const root = join(LANGUAGES_DIR, language, "testbed");
  const parts: string[] = [RECIPE, language, process.version];
  for (const path of files(root).sort()) parts.push(path.slice(root.length), readFileSync(path, "latin1"));
  if (language === "go") parts.push(execFileSync(need(DEBIAN_GO, "Go"), ["version"], { encoding: "utf8" }));
  if (language === "ruby") parts.push(execFileSync("ruby", ["--version"], { encoding: "utf8" }));
  if (language === "js")
    parts.push(readFileSync(join(packageRoot(), "node_modules", "vitest", "package.json"), "utf8"));
  return sha(...parts);
}

const building = new Map<string, Promise<string>>();

/**
 * The language instance's image (`swerun-test/lang-<language>:<hash>`): the base test image's programs, the
 * toolchain, and the testbed repository at /testbed. Built offline once per content hash, then reused.
 */
export function ensureLanguageImage(
  docker: Docker,
  language: Language,
  log: (line: string) => void = () => {},
): Promise<string> {
  const key = language;
  let promise = building.get(key);
  if (!promise) {
    promise = buildLanguageImage(docker, language, log);
    building.set(key, promise);
    promise.catch(() => building.delete(key));
  }
  return promise;
}

async function buildLanguageImage(
  docker: Docker,
  language: Language,
  log: (line: string) => void,
): Promise<string> {
  const image = { repository: `swerun-test/lang-${language}`, hash: recipeHash(language) };
  return buildImage(docker, image, log, (rootfs) => {
    addTestbed(rootfs, testbedRepo(language), (repo) => {
      if (language === "go") addGo(rootfs, repo);
      if (language === "js") addNode(rootfs);
      if (language === "ruby") addRuby(rootfs);
    });
  });
}
