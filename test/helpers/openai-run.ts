import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type OpenAIServer, TEST_KEY, TEST_PRICES } from "./openai-server.js";

/** Where a `swerun run` against the local OpenAI-speaking server works, and the environment to run the CLI in. */
export interface RunWorkspace {
  /** The folder of the run's outputs (run.traj.json, run.report.json, events.jsonl). */
  dir: string;
  /** The environment's working folder, holding greeting.txt ("hello"). */
  work: string;
  /** The isolated settings folder (SWERUN_GLOBAL_CONFIG_DIR). */
  settings: string;
  /** The price registry (model.litellm_model_registry). */
  registry: string;
  env: Record<string, string>;
}

/** Writes a workspace under `dir`: work/greeting.txt, an isolated settings folder and its price registry `prices`. */
export function runWorkspace(dir: string, prices: object = TEST_PRICES): RunWorkspace {
  const work = join(dir, "work");
  const settings = join(dir, "settings");
  mkdirSync(work, { recursive: true });
  mkdirSync(settings, { recursive: true });
  writeFileSync(join(work, "greeting.txt"), "hello\n");
  const registry = join(settings, "prices.json");
  writeFileSync(registry, JSON.stringify(prices));
  return {
    dir,
    work,
    settings,
    registry,
    env: { OPENAI_API_KEY: TEST_KEY, SWERUN_GLOBAL_CONFIG_DIR: settings },
  };
}

/** What a `swerun run` in a workspace does besides the defaults of runArgs. */
export interface RunOptions {
  /** The model (default `openai/test-model`). */
  model?: string;
  /** The task (default: "greeting.txt should say hello, world"). */
  task?: string;
  /** More `-c` specs, after those of the server, the registry and the working folder. */
  config?: string[];
  /** More arguments, after the `-c` specs. */
  extra?: string[];
  /** Also --events events.jsonl. */
  events?: boolean;
}

/**
 * The arguments of `swerun run` (--yolo --exit-immediately) in `space` against `server`, writing run.traj.json
 * and --report run.report.json into the workspace's folder.
 */
export function runArgs(space: RunWorkspace, server: OpenAIServer, options: RunOptions = {}): string[] {
  const { dir, work, registry } = space;
  return [
    "run",
    "-m",
    options.model ?? "openai/test-model",
    "-t",
    options.task ?? "greeting.txt should say hello, world",
    "--yolo",
    "--exit-immediately",
    "-c",
    `model.model_kwargs.api_base=${server.url}`,
    "-c",
    `model.litellm_model_registry=${registry}`,
    "-c",
    `environment.cwd=${work}`,
    ...(options.config ?? []).flatMap((spec) => ["-c", spec]),
    ...(options.extra ?? []),
    "-o",
    join(dir, "run.traj.json"),
    "--report",
    join(dir, "run.report.json"),
    ...(options.events ? ["--events", join(dir, "events.jsonl")] : []),
  ];
}
