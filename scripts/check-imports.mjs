#!/usr/bin/env node
// Checks the import graph of src/: no import cycles between files (through static or dynamic imports), and no
// folder importing a folder above it.
// Layers, top to bottom (a file may import its own layer and the layers below):
//   commands, cli.ts, bin.ts, index.ts > batch (a SWE-bench batch: run, record, grade) > eval (grading one instance)
//   > fixture-images (Docker images built from host files) > images (the batch's image pool and hosts) > run
//   > facts, tracking, view (readers of what runs wrote), reports (the writers of the seeds' formats) > console
//   > datasets (SWE-bench instances and predictions), agent, models, environments, replay
//   > config, templates, python, util, trajectory, formats (run.json) and the files at the top of src/ (errors,
//   events, messages).
// Usage: node scripts/check-imports.mjs [srcDir]. Exit code 1 and one line per problem when it finds any.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

const LAYERS = [
  ["config", "templates", "python", "util", "trajectory", "formats", "(root)"],
  ["datasets", "agent", "models", "environments", "replay"],
  ["console"],
  ["facts", "reports", "tracking", "view"],
  ["run"],
  ["images"],
  ["fixture-images"],
  ["eval"],
  ["batch"],
  ["commands", "cli.ts", "bin.ts", "index.ts"],
];


const src = resolve(process.argv[2] ?? "src");

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

/** The layer unit of a file: its top folder under src/, or its name for the entry points, or "(root)". */
function unit(path) {
  const parts = relative(src, path).split(sep);
  if (parts.length > 1) return parts[0];
  return ["cli.ts", "bin.ts", "index.ts"].includes(parts[0]) ? parts[0] : "(root)";
}

function level(name) {
  const index = LAYERS.findIndex((layer) => layer.includes(name));
  if (index < 0) throw new Error(`scripts/check-imports.mjs: src/${name} is in no layer: add it to LAYERS`);
  return index;
}

/** Relative imports of a file: static ones (`import type` and `export type` marked) and dynamic ones. */
function importsOf(path) {
  const text = readFileSync(path, "utf8");
  const found = [];
  const staticImport = /^\s*(import|export)\s+(type\s+)?[^;'"]*?from\s+["'](\.[^"']+)["']/gm;
  for (const match of text.matchAll(staticImport)) {
    found.push({ spec: match[3], typeOnly: Boolean(match[2]), dynamic: false });
  }
  for (const match of text.matchAll(/^\s*import\s+["'](\.[^"']+)["']/gm)) {
    found.push({ spec: match[1], typeOnly: false, dynamic: false });
  }
  for (const match of text.matchAll(/\bimport\(\s*["'](\.[^"']+)["']\s*\)/g)) {
    found.push({ spec: match[1], typeOnly: false, dynamic: true });
  }
  return found.map((entry) => ({
    ...entry,
    target: resolve(dirname(path), entry.spec.replace(/\.js$/, ".ts")),
  }));
}

const problems = [];
const graph = new Map();
/** Folder-level edges (every import, type-only and dynamic ones too): folders must not import each other in a circle. */
const folders = new Map();
for (const path of files(src)) {
  const from = unit(path);
  const edges = [];
  for (const entry of importsOf(path)) {
    if (!entry.target.startsWith(src + sep)) continue;
    const to = unit(entry.target);
    if (level(to) > level(from)) {
      problems.push(`${relative(".", path)}: imports ${entry.spec} (${to} is above ${from} in the layering)`);
    }
    if (!entry.typeOnly) edges.push(entry.target);
    if (to !== from) folders.set(from, new Set([...(folders.get(from) ?? []), to]));
  }
  graph.set(path, edges);
}

// Cycles among runtime imports (static and dynamic ones; type-only ones are erased): a depth-first search
// reporting each cycle once.
const state = new Map();
const stack = [];
const seen = new Set();
function visit(node) {
  state.set(node, "open");
  stack.push(node);
  for (const next of graph.get(node) ?? []) {
    if (state.get(next) === "open") {
      const cycle = stack.slice(stack.indexOf(next)).map((file) => relative(src, file));
      const key = [...cycle].sort().join(" ");
      if (!seen.has(key)) {
        seen.add(key);
        problems.push(`import cycle: ${[...cycle, relative(src, next)].join(" -> ")}`);
      }
    } else if (!state.has(next)) visit(next);
  }
  stack.pop();
  state.set(node, "done");
}
for (const node of graph.keys()) if (!state.has(node)) visit(node);

// Cycles between folders: a path back from `to` to `from`, reported with the folders on it.
function pathBetween(start, goal, visited = new Set([start])) {
  for (const next of folders.get(start) ?? []) {
    if (next === goal) return [start, goal];
    if (visited.has(next)) continue;
    visited.add(next);
    const rest = pathBetween(next, goal, visited);
    if (rest) return [start, ...rest];
  }
  return undefined;
}
for (const [from, targets] of folders) {
  for (const to of targets) {
    const back = from < to ? pathBetween(to, from) : undefined;
    if (back) problems.push(`folder cycle: ${[from, ...back].join(" -> ")}`);
  }
}

for (const problem of problems) process.stderr.write(`${problem}\n`);
if (problems.length > 0) process.exit(1);
process.stdout.write(`imports: ${graph.size} files, no cycles, no upward imports\n`);
