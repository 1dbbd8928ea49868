import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { Agent } from "../../src/agent/agent.js";
import { loadConfig } from "../../src/config/load.js";
import { createEnvironment } from "../../src/environments/index.js";
import { resetGlobalModelStats } from "../../src/models/global-stats.js";
import { createModel } from "../../src/models/index.js";
import { TrajectoryWriter } from "../../src/trajectory/writer.js";
import { compareMessages, type Json, PROVIDER_FIXTURES } from "../helpers/provider-fixtures.js";

/** Written by scripts/gen-meta-model-fixtures.py from mini-swe-agent's own RouletteModel and InterleavingModel. */
const META = join(PROVIDER_FIXTURES, "meta");
const { agent: AGENT, cases: CASES } = JSON.parse(readFileSync(join(META, "cases.json"), "utf8")) as {
  agent: Record<string, unknown>;
  cases: Array<{ name: string; task: string; model: Record<string, unknown> }>;
};

function metaCase(name: string) {
  const found = CASES.find((c) => c.name === name);
  if (!found) throw new Error(`no meta case ${name}`);
  return found;
}

function expected(name: string): Json {
  return JSON.parse(readFileSync(join(META, `${name}.traj.json`), "utf8"));
}

function writeConfig(model: Record<string, unknown>, workdir: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "swerun-meta-config-")), "case.yaml");
  writeFileSync(
    path,
    stringify({
      agent: { ...AGENT, mode: "yolo", confirm_exit: false, agent_class: "default" },
      environment: { environment_class: "local", cwd: workdir },
      model,
    }),
  );
  return path;
}

/** Runs a case with swerun as the generator ran mini-swe-agent; `random` stands in for the roulette's draw. */
async function runMetaCase(name: string, random?: () => number): Promise<Json> {
  resetGlobalModelStats();
  const fixture = metaCase(name);
  const workdir = mkdtempSync(join(tmpdir(), "swerun-meta-case-"));
  const config = loadConfig([writeConfig(fixture.model, workdir)]);
  const env = await createEnvironment(config.environment, { runId: `meta-${name}` });
  const path = join(workdir, "..", `${name}-${process.pid}.traj.json`);
  try {
    const model = await createModel(config.model, { random });
    await new Agent({ model, env, config: config.agent, writer: new TrajectoryWriter(path) }).run(
      fixture.task,
    );
  } finally {
    await env.close();
  }
  return JSON.parse(readFileSync(path, "utf8").replaceAll(workdir, "<workdir>"));
}

function expectSameRun(name: string, actual: Json) {
  const mini = expected(name);
  const { expected: want, actual: got } = compareMessages(mini, actual);
  expect(got).toEqual(want);
  expect(actual.info.exit_status).toBe(mini.info.exit_status);
  expect(actual.info.submission).toBe(mini.info.submission);
  expect(actual.info.model_stats).toEqual(mini.info.model_stats);
  expect(actual.info.config.model).toEqual(mini.info.config.model);
  expect(actual.info.config.model_type).toBe(mini.info.config.model_type);
}

describe("meta models (mini-swe-agent's RouletteModel and InterleavingModel)", () => {
  it("interleaving by sequence: the sub-model of each call, its name, cost and observations as mini's", async () => {
    expectSameRun("interleaving-sequence", await runMetaCase("interleaving-sequence"));
  });

  it("interleaving in turn: tool-call sub-models answered with tool messages by the one that called", async () => {
    expectSameRun("interleaving-alternate", await runMetaCase("interleaving-alternate"));
  });

  it("roulette: the same draw gives mini's trajectory", async () => {
    const mini = expected("roulette");
    const wheels = (mini.messages as Json[])
      .filter((m) => m.role === "assistant")
      .map((m) => Number(String(m.model_name).replace("wheel-", "")));
    const draws = [...wheels];
    const actual = await runMetaCase("roulette", () => ((draws.shift() ?? 0) + 0.5) / 3);
    expect(draws).toEqual([]);
    expectSameRun("roulette", actual);
  });

  it("roulette with Math.random: every answer is from a sub-model, each sub-model's outputs in its order", async () => {
    const actual = await runMetaCase("roulette");
    const answers = (actual.messages as Json[]).filter((m) => m.role === "assistant");
    const next = new Map<string, number>();
    for (const answer of answers) {
      const wheel = String(answer.model_name);
      expect(["wheel-0", "wheel-1", "wheel-2"]).toContain(wheel);
      const call = next.get(wheel) ?? 0;
      expect(answer.content).toBe(`Wheel ${wheel.slice(-1)}, call ${call}.`);
      next.set(wheel, call + 1);
    }
    expect(actual.info.exit_status).toBe("Submitted");
  });

  it("mini-swe-agent 2.4.6 as released cannot run these classes (what the fixtures record)", () => {
    const unpatched = JSON.parse(readFileSync(join(META, "unpatched.json"), "utf8"));
    for (const run of Object.values(unpatched.runs) as Json[]) {
      expect(run.error).toMatch(/^AttributeError: .* has no attribute 'format_message'$/);
    }
  });

  it("a bad sub-model config is one line naming the field, when the config loads", () => {
    const workdir = mkdtempSync(join(tmpdir(), "swerun-meta-bad-"));
    const { sequence: _sequence, ...base } = metaCase("interleaving-sequence").model;
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { ...base, model_kwargs: [{ model_name: "x", model_class: "nope" }] },
        /model\.model_kwargs\.0\.model_class: "nope" is not supported/,
      ],
      [
        { ...base, model_kwargs: [{ model_name: "x", model_class: "deterministic" }] },
        /model\.model_kwargs\.0\.outputs: required/,
      ],
      [
        { ...base, model_kwargs: [{ model_name: "x", temperature: 1 }] },
        /model\.model_kwargs\.0\.temperature: unknown keys?/,
      ],
      [{ ...base, sequence: [0, 2] }, /model\.sequence\.1: 2 names no sub-model \(there are 2\)/],
      [
        { model_class: "minisweagent.models.extra.roulette.RouletteModel", model_name: "roulette" },
        /model\.model_kwargs: a list of model configs is required/,
      ],
    ];
    for (const [model, message] of cases) {
      let error: Error | undefined;
      try {
        loadConfig([writeConfig(model, workdir)]);
      } catch (caught) {
        error = caught as Error;
      }
      expect(error?.message).toMatch(message);
      expect(error?.message).toMatch(/^[^\n]+case\.yaml: /);
      expect(error?.message).not.toContain("\n");
    }
  });
});
