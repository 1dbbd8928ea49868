import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/util/package-root.js";

const DEMO = join(packageRoot(), "config", "swebench-demo");

/** A step of a scripted model, in mini-swe-agent's message shape. */
export const step = (command: string) => ({
  role: "assistant",
  content: `running ${command}`,
  extra: { actions: [{ command }], cost: 0.01 },
});

/**
 * A SWE-bench-shaped dataset file in `dir`: `count` instances on the demo's calc fixture, each with a
 * scripted model that runs `before` first (e.g. a sleep), fixes the bug and submits `git diff`.
 */
export function writeDataset(
  dir: string,
  count: number,
  before = "true",
  extra: Record<string, unknown> = {},
): string {
  cpSync(join(DEMO, "calc"), join(dir, "calc"), { recursive: true });
  const instances = Array.from({ length: count }, (_, i) => ({
    instance_id: `test__calc-${i + 1}`,
    problem_statement: "add subtracts",
    repo: "test/calc",
    fixture: "calc",
    image_name: "swerun-demo/calc:latest",
    swerun_scripted_outputs: [
      step(before),
      step("sed -i 's/\\$1 - \\$2/$1 + $2/' calc.sh && bash test.sh"),
      step("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"),
    ],
    ...extra,
  }));
  const path = join(dir, "dataset.json");
  writeFileSync(path, JSON.stringify(instances, null, 2));
  return path;
}

/** The flags of a quiet swebench batch of scripted instances in Docker containers with networking off. */
export const SCRIPTED_IN_DOCKER = [
  "-c",
  "swebench",
  "-c",
  "swebench-demo",
  "--environment-class",
  "docker",
  "-c",
  'environment.run_args=["--rm","--network","none"]',
  "-q",
];

/**
 * A dataset file in `dir` whose instance i (`<prefix>__case-<i>`, from 1) runs in `images[i]`: a scripted
 * agent that runs `before`, then submits "fix-<i>".
 */
export function writeImageDataset(
  dir: string,
  images: { image: string }[],
  options: { prefix: string; before?: string; repo?: string },
): string {
  const instances = images.map((pushed, i) => ({
    instance_id: `${options.prefix}__case-${i + 1}`,
    problem_statement: "print a fix",
    ...(options.repo === undefined ? {} : { repo: options.repo }),
    image_name: pushed.image,
    swerun_scripted_outputs: [
      step(options.before ?? "true"),
      step(`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo fix-${i + 1}`),
    ],
  }));
  const path = join(dir, "dataset.json");
  writeFileSync(path, JSON.stringify(instances, null, 2));
  return path;
}
