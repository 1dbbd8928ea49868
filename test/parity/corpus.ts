import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { Agent } from "../../src/agent/agent.js";
import { loadConfig } from "../../src/config/load.js";
import type { SwerunConfig } from "../../src/config/schema.js";
import { createEnvironment } from "../../src/environments/index.js";
import { platformVars } from "../../src/environments/platform.js";
import type { Message } from "../../src/messages.js";
import { resetGlobalModelStats } from "../../src/models/global-stats.js";
import { createModel } from "../../src/models/index.js";
import { TrajectoryWriter } from "../../src/trajectory/writer.js";
import { packageRoot } from "../../src/util/package-root.js";
import { OpenAIServer } from "../helpers/openai-server.js";

/** The corpus written by scripts/gen-parity-corpus.py from mini-swe-agent's own runs. */
export const CORPUS = join(packageRoot(), "test", "fixtures", "parity");

export interface ParityCase {
  name: string;
  task: string;
  /** Config layers in order: a file in configs/, or an inline mapping. */
  configs: Array<string | Record<string, unknown>>;
  /** Chat-completion responses the litellm-class cases get, in order. */
  replies?: unknown[];
  /** mini-swe-agent raised instead of running (expected/<name>.error.json says what). */
  fails?: boolean;
}

/** What mini-swe-agent raised for a case that `fails` (it writes no trajectory then). */
export interface ExpectedError {
  exception: string;
  message: string;
  /** The template line its traceback names. */
  template_line: number;
}

// biome-ignore lint/suspicious/noExplicitAny: trajectories are arbitrary JSON
export type Trajectory = Record<string, any>;

export const CASES = JSON.parse(readFileSync(join(CORPUS, "cases.json"), "utf8")) as ParityCase[];

export function expectedTrajectory(name: string): Trajectory {
  return JSON.parse(readFileSync(join(CORPUS, "expected", `${name}.traj.json`), "utf8")) as Trajectory;
}

export function expectedError(name: string): ExpectedError {
  return JSON.parse(readFileSync(join(CORPUS, "expected", `${name}.error.json`), "utf8")) as ExpectedError;
}

/**
 * A trajectory file's JSON with Python's distinction between floats and ints kept: a number written
 * with a fraction or an exponent (`1.0`, `1e+16`) becomes `{ $float: n }`, so `1.0` and `1` differ.
 */
export function typedJson(text: string): Trajectory {
  const tagged = text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g, (token) =>
    token.startsWith('"') || !/[.eE]/.test(token) ? token : `{"$float": ${token}}`,
  );
  return JSON.parse(tagged) as Trajectory;
}

/** The case's config as swerun loads it: the same layers, as `-c` files, in order. */
export function caseConfig(parity: ParityCase, dir: string, extra: string[] = []): SwerunConfig {
  const specs = parity.configs.map((layer, index) => {
    if (typeof layer === "string") return join(CORPUS, "configs", layer);
    const path = join(dir, `layer-${index}.yaml`);
    writeFileSync(path, stringify(layer));
    return path;
  });
  return loadConfig([...specs, ...extra]);
}

/**
 * Runs a case with swerun in `workdir` (as mini-swe-agent ran it in an empty temporary directory),
 * writing its trajectory to `outputPath` when given.
 */
export async function runCase(
  parity: ParityCase,
  workdir: string,
  configDir: string,
  outputPath?: string,
): Promise<Agent> {
  resetGlobalModelStats();
  const server = parity.replies ? await OpenAIServer.start() : undefined;
  try {
    for (const body of parity.replies ?? []) server?.push({ body });
    const extra = server ? [`model.model_kwargs.api_base=${server.url}`] : [];
    const config = caseConfig(parity, configDir, extra);
    if (!config.environment.cwd) config.environment.cwd = workdir;
    const env = await createEnvironment(config.environment, { runId: `parity-${parity.name}` });
    try {
      const model = await createModel(config.model);
      const writer = outputPath ? new TrajectoryWriter(outputPath) : undefined;
      const agent = new Agent({ model, env, config: { ...config.agent, output_path: null }, writer });
      await agent.run(parity.task);
      return agent;
    } finally {
      await env.close();
    }
  } finally {
    await server?.close();
  }
}

/** Keys of `extra` compared: mini-swe-agent's own, except the ones that change per run or per client. */
const UNCOMPARED_EXTRA = new Set(["timestamp", "response"]);

/**
 * A message reduced to what parity means: every field but `extra`, and the `extra` keys mini-swe-agent
 * wrote (`keys`; a message without `extra` stays without), with the machine's uname fields replaced by
 * placeholders.
 */
export function comparable(message: Message, keys: string[], uname: Record<string, string>): unknown {
  const { extra, ...fields } = message;
  const kept = Object.fromEntries(
    keys.filter((key) => !UNCOMPARED_EXTRA.has(key)).map((key) => [key, extra?.[key]]),
  );
  let text = JSON.stringify(extra === undefined ? fields : { ...fields, extra: kept });
  for (const [name, value] of Object.entries(uname)) {
    if (value) text = text.split(JSON.stringify(value).slice(1, -1)).join(`<${name}>`);
  }
  return JSON.parse(text);
}

/** mini-swe-agent's messages and swerun's, each made comparable with the other's extra keys. */
export function comparePairs(expected: Trajectory, actual: Message[]) {
  const recorded = expected.messages as Message[];
  const theirs = expected.parity.uname as Record<string, string>;
  const ours = platformVars();
  const mine = {
    system: ours.system ?? "",
    release: ours.release ?? "",
    version: ours.version ?? "",
    machine: ours.machine ?? "",
  };
  return {
    expected: recorded.map((message) => comparable(message, Object.keys(message.extra ?? {}), theirs)),
    actual: actual.map((message, index) =>
      comparable(message, Object.keys(recorded[index]?.extra ?? {}), mine),
    ),
  };
}

/**
 * Keys of `info` compared: every key mini-swe-agent wrote (recursively into mappings), except
 * `mini_version` (swerun writes its own version there, deliberately) and `config.environment.cwd` when
 * mini-swe-agent's was "" (it ran in the process's directory, the test gives swerun a folder instead).
 */
export function compareInfo(expected: Trajectory, actual: Trajectory) {
  const pick = (want: unknown, have: unknown, path: string): unknown => {
    if (typeof want !== "object" || want === null || Array.isArray(want) || "$float" in want) return have;
    const node = (typeof have === "object" && have !== null ? have : {}) as Record<string, unknown>;
    const entries = Object.entries(want).filter(([key, value]) => {
      const keyPath = path ? `${path}.${key}` : key;
      return keyPath !== "mini_version" && !(keyPath === "config.environment.cwd" && value === "");
    });
    return Object.fromEntries(
      entries.map(([key, value]) => [key, pick(value, node[key], path ? `${path}.${key}` : key)]),
    );
  };
  return { expected: pick(expected.info, expected.info, ""), actual: pick(expected.info, actual.info, "") };
}
