import { dirname } from "node:path";
import type { ModelConfig } from "../config/schema.js";
import { describeModel, type ModelFacts } from "../models/model-facts.js";
import { JsonlSink } from "../util/jsonl-sink.js";
import { makeDirsSync } from "../util/make-dirs.js";
import { checkOutputFile } from "./output.js";
import { SwarmEventStream, type SwarmIds } from "./swarm-events.js";

/** The `--events PATH` of a command: one sink, and a SwarmSDK-shaped stream per swarm written to it. */
export interface EventLog {
  sink: JsonlSink;
  models: ModelFacts[];
  /** A stream of one swarm (a run, a batch, an instance) on this log. */
  stream(ids: SwarmIds, options?: { agents?: string[]; swarmName?: string }): SwarmEventStream;
  close(): void;
}

/**
 * Opens `--events PATH` (appending; `-` is standard output, and then everything the command would print on
 * standard output goes to standard error, so standard output holds only JSON lines). The path is checked
 * before anything runs (exit 2 naming it). `models` are looked up once for prices and context windows.
 */
export async function openEventLog(
  path: string | undefined,
  models: ModelConfig[],
): Promise<EventLog | undefined> {
  if (path === undefined || path === "") return undefined;
  const target = checkOutputFile(String(path), "--events");
  if (target !== "-") makeDirsSync(dirname(target));
  const facts = await Promise.all(models.map((config) => describeModel(config)));
  if (target === "-") consoleToStderr();
  const sink = new JsonlSink(target);
  return {
    sink,
    models: facts,
    stream: (ids, options = {}) => new SwarmEventStream({ sink, models: facts, ...ids, ...options }),
    close: () => sink.close(),
  };
}

/** Sends what the process writes to standard output to standard error from now on (`--events -`, `--report -`). */
export function consoleToStderr(): void {
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
}
