#!/usr/bin/env node
// Reports the files in src/ longer than 450 lines and the classes (declarations and expressions) longer than 300,
// and fails on any that is not on the list below at its size or less: the list holds the line while they are
// cut, each entry may only shrink. Sources are parsed with oxc-parser, as scripts/check-functions.mjs does.
// Usage: node scripts/check-sizes.mjs [srcDir] [allowed.json]. Exit code 1 when a file or class is over its
// limit. `allowed.json` (`{ "files": {path: lines}, "classes": {"path#Class": lines} }`, paths relative to srcDir)
// replaces the list below; the script's own tests use it on their fake trees.
import { readFileSync } from "node:fs";
import { relative, resolve, sep } from "node:path";
import { parseSync } from "oxc-parser";
import { lineOf, sourceFiles } from "./source-walk.mjs";

/** The longest a file may be. */
const MAX_FILE_LINES = 450;
/** The longest a class may be. */
const MAX_CLASS_LINES = 300;

/**
 * Files and classes over the limits today, with their sizes now: each may shrink, not grow. Lower a figure as
 * its file or class is cut, and drop the entry once it fits (the script says when).
 */
const ALLOWED = {
  files: {},
  classes: {},
};

const src = resolve(process.argv[2] ?? "src");
const allowed = process.argv[3] ? JSON.parse(readFileSync(process.argv[3], "utf8")) : ALLOWED;



/** The classes of a parsed file with their lines (first to last line of the class itself, comments above not counted). */
function classes(program, starts) {
  const found = [];
  const walk = (node) => {
    if (Array.isArray(node)) {
      for (const child of node) walk(child);
      return;
    }
    if (!node || typeof node.type !== "string") return;
    if (node.type === "ClassDeclaration" || node.type === "ClassExpression") {
      const lines = lineOf(starts, node.end - 1) - lineOf(starts, node.start) + 1;
      found.push({ name: node.id?.name ?? "(anonymous)", line: lineOf(starts, node.start), lines });
    }
    for (const [key, value] of Object.entries(node)) {
      if (key !== "type" && value && typeof value === "object") walk(value);
    }
  };
  walk(program);
  return found;
}

const over = [];
const problems = [];
const hints = [];
/** Checks one measure against its limit and its allowance (the size it had when the list was written). */
function measure(kind, key, where, lines, limit, allowance) {
  if (lines <= limit) {
    if (allowance !== undefined) hints.push(`${kind} ${key} is ${lines} lines: drop it from the list`);
    return;
  }
  over.push(`${lines}\t${where}\t${kind}${kind === "class" ? ` ${key.split("#")[1]}` : ""}`);
  if (allowance === undefined)
    problems.push(`${where}: ${kind} of ${lines} lines, over ${limit}: cut it along its seams`);
  else if (lines > allowance)
    problems.push(`${where}: ${kind} of ${lines} lines grew past its ${allowance} (limit ${limit}): cut it`);
  else if (lines < allowance) hints.push(`${kind} ${key} is ${lines} lines: lower its figure from ${allowance}`);
}

for (const path of sourceFiles(src)) {
  const text = readFileSync(path, "utf8");
  const key = relative(src, path).split(sep).join("/");
  const where = relative(".", path);
  const result = parseSync(path, text);
  if (result.errors.length > 0) {
    process.stderr.write(`${where}: does not parse: ${result.errors[0].message}\n`);
    process.exit(1);
  }
  const starts = [0];
  for (let index = text.indexOf("\n"); index >= 0; index = text.indexOf("\n", index + 1)) starts.push(index + 1);
  const fileLines = text.endsWith("\n") ? starts.length - 1 : starts.length;
  measure("file", key, where, fileLines, MAX_FILE_LINES, allowed.files?.[key]);
  for (const found of classes(result.program, starts)) {
    const classKey = `${key}#${found.name}`;
    const at = `${where}:${found.line}`;
    measure("class", classKey, at, found.lines, MAX_CLASS_LINES, allowed.classes?.[classKey]);
  }
}

over.sort((a, b) => Number.parseInt(b, 10) - Number.parseInt(a, 10));
for (const line of over) process.stdout.write(`${line}\n`);
for (const hint of hints) process.stdout.write(`${hint} (scripts/check-sizes.mjs)\n`);
const summary = `sizes: ${over.length} over ${MAX_FILE_LINES} lines a file or ${MAX_CLASS_LINES} a class, each on the list`;
if (problems.length > 0) {
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  process.exit(1);
}
process.stdout.write(`${summary}\n`);
