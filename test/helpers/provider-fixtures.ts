import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "../../src/agent/agent.js";
import { loadConfig } from "../../src/config/load.js";
import { createEnvironment } from "../../src/environments/index.js";
import type { AgentEvent } from "../../src/events.js";
import { resetGlobalModelStats } from "../../src/models/global-stats.js";
import { createModel } from "../../src/models/index.js";
import { TrajectoryWriter } from "../../src/trajectory/writer.js";
import { packageRoot } from "../../src/util/package-root.js";

/** The fixtures written by scripts/gen-provider-fixtures.py from mini-swe-agent + litellm's own runs. */
export const PROVIDER_FIXTURES = join(packageRoot(), "test", "fixtures", "providers");
/** The key the fixtures were recorded with (written `<key>` in them). */
export const FIXTURE_KEY = "sk-swerun-fixture-4c1d9e7a2b";

// biome-ignore lint/suspicious/noExplicitAny: fixtures are arbitrary JSON
export type Json = any;

export interface ProviderCase {
  name: string;
  protocol: string;
  task: string;
  model: Record<string, unknown>;
  agent?: Record<string, unknown>;
  registry?: Record<string, unknown>;
  /** The server computes each reply's usage from the request (prompt caching, see anthropic-cache.ts). */
  accounting?: string;
  replies: unknown[];
}

export const PROVIDER_CASES = JSON.parse(
  readFileSync(join(PROVIDER_FIXTURES, "cases.json"), "utf8"),
) as ProviderCase[];

export function providerCase(name: string): ProviderCase {
  const found = PROVIDER_CASES.find((c) => c.name === name);
  if (!found) throw new Error(`no provider fixture case ${name}`);
  return found;
}

/** The cases scripts/gen-provider-fixtures-more.py wrote from mini-swe-agent + litellm's own runs. */
let moreCases: ProviderCase[] | undefined;

export function moreCase(name: string): ProviderCase {
  moreCases ??= JSON.parse(
    readFileSync(join(PROVIDER_FIXTURES, "cases-more.json"), "utf8"),
  ) as ProviderCase[];
  const found = moreCases.find((c) => c.name === name);
  if (!found) throw new Error(`no provider fixture case ${name}`);
  return found;
}

export function expectedRequests(name: string): Json[] {
  return JSON.parse(readFileSync(join(PROVIDER_FIXTURES, "expected", `${name}.requests.json`), "utf8"));
}

export function expectedTrajectory(name: string): Json {
  return JSON.parse(readFileSync(join(PROVIDER_FIXTURES, "expected", `${name}.traj.json`), "utf8"));
}

/** The agent config the generator gives mini-swe-agent's DefaultAgent. */
const AGENT = {
  system_template: "You are a scripted test agent. Use the bash tool.",
  instance_template: "Task: {{task}}",
  step_limit: 20,
  cost_limit: 3.0,
  mode: "yolo",
  confirm_exit: false,
  agent_class: "default",
};

/**
 * Runs a fixture case with swerun as the generator ran mini-swe-agent (its DefaultAgent, a local environment
 * in a fresh folder), the model's `<base>` replaced by `base`; returns the trajectory swerun wrote and its events.
 */
export async function runProviderCase(
  fixture: ProviderCase,
  base: string,
  modelOverrides: Record<string, unknown> = {},
): Promise<{ trajectory: Json; events: AgentEvent[]; workdir: string }> {
  resetGlobalModelStats();
  const workdir = mkdtempSync(join(tmpdir(), "swerun-provider-case-"));
  const configDir = mkdtempSync(join(tmpdir(), "swerun-provider-config-"));
  const model = JSON.parse(JSON.stringify(fixture.model).replaceAll("<base>", base));
  if (fixture.registry) {
    const registry = join(configDir, "registry.json");
    writeFileSync(registry, JSON.stringify(fixture.registry));
    model.litellm_model_registry = registry;
  }
  const layer = join(configDir, "case.yaml");
  // JSON (which the loader reads as YAML would): a YAML 1.1 reader takes an unquoted 2024-06-01 for a date.
  writeFileSync(
    layer,
    JSON.stringify({
      agent: { ...AGENT, ...fixture.agent },
      environment: { environment_class: "local", cwd: workdir },
      model: { retry_min_wait: 0.01, retry_max_wait: 0.02, ...model, ...modelOverrides },
    }),
  );
  const config = loadConfig([layer]);
  const events: AgentEvent[] = [];
  const env = await createEnvironment(config.environment, { runId: `provider-${fixture.name}` });
  const path = join(configDir, "out.traj.json");
  try {
    const created = await createModel(config.model, { emit: (event) => events.push(event) });
    const agent = new Agent({
      model: created,
      env,
      config: config.agent,
      writer: new TrajectoryWriter(path),
    });
    await agent.run(fixture.task);
    return { trajectory: JSON.parse(readFileSync(path, "utf8")), events, workdir };
  } finally {
    await env.close();
    // Read, or the case failed: its folder goes (bench/cost.ts runs cases outside vitest too).
    rmSync(configDir, { recursive: true, force: true });
  }
}

/** Drops keys whose value is null, everywhere (litellm's models write every optional field as null). */
export function withoutNulls(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, item]) => item !== null)
      .map(([key, item]) => [key, withoutNulls(item)]),
  );
}

/**
 * A message as compared with mini-swe-agent's: its fields, and of its `extra` the keys mini-swe-agent wrote
 * (`keys`) but the per-run ones (timestamp); the response's per-call ids replaced, and `differences` applied.
 */
export function comparableMessage(
  message: Json,
  keys: string[],
  differences: (message: Json) => Json = (m) => m,
): Json {
  const { extra, ...fields } = structuredClone(message);
  const kept = Object.fromEntries(
    keys.filter((key) => key !== "timestamp").map((key) => [key, extra?.[key]]),
  );
  return differences(extra === undefined ? fields : { ...fields, extra: kept });
}

/** mini-swe-agent's messages and swerun's, each made comparable with mini-swe-agent's extra keys. */
export function compareMessages(expected: Json, actual: Json, differences?: (message: Json) => Json) {
  const recorded = expected.messages as Json[];
  return {
    expected: recorded.map((m) => comparableMessage(m, Object.keys(m.extra ?? {}), differences)),
    actual: (actual.messages as Json[]).map((m, i) =>
      comparableMessage(m, Object.keys(recorded[i]?.extra ?? {}), differences),
    ),
  };
}
