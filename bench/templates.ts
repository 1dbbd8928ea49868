/** Rendering mini-swe-agent's observation template: microseconds per render for ASCII and emoji-heavy 10 KB outputs. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { renderTemplate } from "../src/templates/render.js";
import { packageRoot } from "../src/util/package-root.js";

const OBSERVATION = readFileSync(join(packageRoot(), "templates", "common", "observation.j2"), "utf8");

function microsecondsPerRender(output: string): number {
  const vars = { output: { output, returncode: 0, exception_info: "" } };
  for (let i = 0; i < 200; i++) renderTemplate(OBSERVATION, vars, "observation_template");
  const times: number[] = [];
  for (let batch = 0; batch < 7; batch++) {
    const start = performance.now();
    for (let i = 0; i < 200; i++) renderTemplate(OBSERVATION, vars, "observation_template");
    times.push(((performance.now() - start) / 200) * 1000);
  }
  return times.sort((a, b) => a - b)[3] ?? 0;
}

const rows = [
  ["10 KB ASCII", microsecondsPerRender("0123456789abcdef\n".repeat(603))],
  ["10 KB emoji-heavy", microsecondsPerRender("a😀é\n".repeat(2600))],
  ["100 KB ASCII (elided)", microsecondsPerRender("0123456789abcdef\n".repeat(6030))],
] as const;
process.stdout.write("| observation output | µs per render (median of 7 batches) |\n| --- | ---: |\n");
for (const [label, us] of rows) process.stdout.write(`| ${label} | ${us.toFixed(1)} |\n`);
