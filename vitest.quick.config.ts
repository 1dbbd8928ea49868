import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * `npm run test:quick`: every test that needs neither Docker nor chromium nor a Kubernetes cluster. A test file
 * is left out when it reaches, through its imports inside test/, one of the gates those tests pass through:
 * the Docker helpers (`describeDocker`, extra dockerd processes, the local registry), the browser helper
 * (`describeBrowser`), the cluster helper (`describeKubernetes`), and the small disk (a file system mounted as
 * root, whose tests time a disk filling up). Everything else runs: the CLI (on the built dist/), the local and
 * bubblewrap environments, the model clients against local HTTP servers.
 */
const GATES = [
  "test/helpers/docker.ts",
  "test/helpers/docker-daemons.ts",
  "test/helpers/local-registry.ts",
  "test/view/browser.ts",
  "test/environments/kubernetes/cluster.ts",
  "test/helpers/small-disk.ts",
];

const root = import.meta.dirname;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" ? [] : testFiles(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Whether `file` reaches a gate through relative imports of modules under test/ (src/ is not followed). */
function reachesGate(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file) || !existsSync(file)) return false;
  seen.add(file);
  if (GATES.includes(relative(root, file))) return true;
  const text = readFileSync(file, "utf8");
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)\.js"/g)) {
    const target = resolve(dirname(file), `${match[1]}.ts`);
    if (relative(root, target).startsWith("test/") && reachesGate(target, seen)) return true;
  }
  return false;
}

const needsTheWorld = testFiles(join(root, "test"))
  .filter((file) => reachesGate(file))
  .map((file) => relative(root, file));

// These tests mostly wait for the processes they start (the CLI, shells, local HTTP servers): four files at
// once, where vitest's default on a 2-core machine is one.
export default mergeConfig(
  base,
  defineConfig({ test: { exclude: ["**/node_modules/**", ...needsTheWorld], maxWorkers: 4 } }),
);
