import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { expect, it } from "vitest";
import { readRunFacts } from "../../src/facts/read-run.js";
import { runCli } from "../helpers/cli.js";
import { describeDocker } from "../helpers/docker.js";
import { completion, OpenAIServer, TEST_KEY, TEST_PRICES, toolCall } from "../helpers/openai-server.js";
import { tempDir } from "../helpers/tmp.js";

// biome-ignore lint/suspicious/noExplicitAny: outputs are read as JSON
type Json = Record<string, any>;
const readJson = (path: string): Json => JSON.parse(readFileSync(path, "utf8"));
const lines = (path: string): Json[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));

const CALC = "swerun-demo__calc-1";
const GREET = "swerun-demo__greet-2";
const usage = (prompt: number) => ({
  prompt_tokens: prompt,
  completion_tokens: 20,
  total_tokens: prompt + 20,
});

/** The page's overview data and its detail records (gzip+base64), as the browser unpacks them. */
function viewData(file: string): { page: Json; details: Json[] } {
  const html = readFileSync(file, "utf8");
  const page = JSON.parse(
    /<script type="application\/json" id="swerun-view-data">(.*?)<\/script>/s.exec(html)?.[1] ?? "null",
  );
  const details = [
    ...html.matchAll(/<script type="application\/gzip\+base64" id="d-0-\d+">(.*?)<\/script>/gs),
  ].map((match) => JSON.parse(gunzipSync(Buffer.from(match[1] ?? "", "base64")).toString("utf8")));
  return { page, details };
}

await describeDocker("one set of facts across every output", () => {
  it("agrees on wall time, cost, steps, tokens, exit status and verdict in every output of one batch", async () => {
    const dir = tempDir();
    const settings = join(dir, "settings");
    mkdirSync(settings, { recursive: true });
    writeFileSync(join(settings, "prices.json"), JSON.stringify(TEST_PRICES));
    const server = await OpenAIServer.start();
    // calc-1: a retried request (HTTP 503), a reply cut at the token limit (format error), a command that
    // times out, the fix, the submission (resolved). greet-2: submits an empty patch (empty_patch).
    server.push(
      { status: 503, headers: { "retry-after": "0" }, body: { error: { message: "overloaded" } } },
      {
        body: completion({
          content: "Look first.",
          toolCalls: [toolCall("c1", { command: "ls && cat calc.sh" })],
          usage: usage(800),
        }),
      },
      {
        body: completion({
          content: "I will explain at length why",
          finishReason: "length",
          usage: usage(900),
        }),
      },
      {
        body: completion({
          content: "Is it slow?",
          toolCalls: [toolCall("c3", { command: "sleep 5" })],
          usage: usage(1000),
        }),
      },
      {
        body: completion({
          content: "Fix it.",
          toolCalls: [toolCall("c4", { command: "sed -i 's/\\$1 - \\$2/$1 + $2/' calc.sh && bash test.sh" })],
          usage: usage(1100),
        }),
      },
      {
        body: completion({
          content: "Submit.",
          toolCalls: [
            toolCall("c5", {
              command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
            }),
          ],
          usage: usage(1200),
        }),
      },
      {
        body: completion({
          content: "Nothing to change.",
          toolCalls: [toolCall("c6", { command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" })],
          usage: usage(700),
        }),
      },
    );
    const out = join(dir, "runs", "batch");
    const env = { OPENAI_API_KEY: TEST_KEY, SWERUN_GLOBAL_CONFIG_DIR: settings };
    try {
      const batch = await runCli(
        [
          "swebench",
          "--subset",
          "demo",
          "--instance-ids",
          `${CALC},${GREET}`,
          "--environment-class",
          "local",
          "-m",
          "openai/test-model",
          "-c",
          `model.model_kwargs.api_base=${server.url}`,
          "-c",
          `model.litellm_model_registry=${join(settings, "prices.json")}`,
          "-c",
          "environment.timeout=1",
          "--eval",
          "--events",
          join(dir, "events.jsonl"),
          "-w",
          "1",
          "-o",
          out,
        ],
        { env },
      );
      expect(batch.code).toBe(0);
      expect(batch.stdout).toContain("resolved: 1/2 (1 graded, 1 empty, 0 errors)");
    } finally {
      await server.close();
    }
    const trajectoryOf = (id: string) => join(out, id, `${id}.traj.json`);
    for (const id of [CALC, GREET]) {
      const report = join(dir, `${id}.report.json`);
      expect((await runCli(["report", trajectoryOf(id), "-o", report], { env })).code).toBe(0);
    }
    expect((await runCli(["export", out, "-o", join(dir, "summary.jsonl")], { env })).code).toBe(0);
    expect((await runCli(["export", out, "--format", "judge", "-o", join(dir, "judge")], { env })).code).toBe(
      0,
    );
    const shown = await runCli(["runs", "show", out, "--json", "--dir", join(dir, "runs")], { env });
    expect(shown.code).toBe(0);
    expect((await runCli(["view", out, "-o", join(dir, "view.html")], { env })).code).toBe(0);

    const run = readJson(join(out, "run.json"));
    const events = lines(join(dir, "events.jsonl"));
    const summary = lines(join(dir, "summary.jsonl"));
    const judge = lines(join(dir, "judge.full.jsonl"));
    const runs = JSON.parse(shown.stdout);
    const view = viewData(join(dir, "view.html"));

    const expected = {
      [CALC]: {
        exit: "Submitted",
        resolved: true,
        verdict: "resolved",
        steps: 5,
        prompt: 5000,
        completion: 100,
      },
      [GREET]: {
        exit: "Submitted",
        resolved: false,
        verdict: "empty_patch",
        steps: 1,
        prompt: 700,
        completion: 20,
      },
    };
    for (const [id, want] of Object.entries(expected)) {
      const trajectory = readJson(trajectoryOf(id));
      const facts = readRunFacts(trajectoryOf(id));
      const timing = trajectory.info.swerun_timing;
      const cost: number = trajectory.info.model_stats.instance_cost;
      const own = events.filter((event) => event.swarm_id === `${run.run_id}/${id}`);
      const end = own.find((event) => event.type === "instance_end") as Json;
      const stop = own.find((event) => event.type === "swarm_stop") as Json;
      const report = readJson(join(dir, `${id}.report.json`));
      const line = summary.find((record) => record.id === id) as Json;
      const full = judge.find((record) => record.id === id) as Json;
      const runCase = run.cases[id];
      const shownCase = runs.cases[id];
      const row = view.page.runs[0].rows.find((r: Json) => r.id === id);
      const detail = view.details[row.detail] as Json;

      // Wall time: as the batch measured it (its environment started and torn down included), everywhere.
      expect(timing.wall_time_s).toBeGreaterThan(0);
      expect(timing.ended_at - timing.started_at).toBeCloseTo(timing.wall_time_s, 3);
      expect(facts).toMatchObject({ wall_time_s: timing.wall_time_s, timing: "batch" });
      expect(runCase.duration_s).toBe(Math.round(timing.wall_time_s * 1000) / 1000);
      expect(runCase.behaviorMetrics.wallTimeSeconds).toBe(runCase.duration_s);
      expect(end.duration).toBe(runCase.duration_s);
      expect(shownCase.duration_s).toBe(runCase.duration_s);
      expect(row.wall_s).toBe(runCase.duration_s);
      expect(line.duration).toBe(Math.round(timing.wall_time_s * 1000));
      expect(Math.abs(full.timing.end - full.timing.start - line.duration)).toBeLessThanOrEqual(1);

      // Cost: the trajectory's, and the sum of its steps' costs in the view (no step shifted).
      expect(cost).toBeGreaterThan(0);
      expect(facts.cost).toBe(cost);
      expect(runCase.cost).toBe(cost);
      expect(runCase.behaviorMetrics.costUsd).toBe(Math.round(cost * 10000) / 10000);
      expect(end.cost).toBe(cost);
      expect(stop.total_cost).toBeCloseTo(cost, 12);
      expect(full.metadata.cost).toBeCloseTo(cost, 10);
      expect(shownCase.cost).toBe(cost);
      expect(row.cost).toBe(cost);
      const stepCosts = (detail.steps as Json[]).map((step) => step.cost);
      expect(stepCosts.every((value) => typeof value === "number")).toBe(true);
      expect(stepCosts.reduce((sum: number, value: number) => sum + value, 0)).toBeCloseTo(cost, 12);
      const recorded = (trajectory.messages as Json[])
        .filter((message) => typeof message.extra?.cost === "number")
        .map((message) => message.extra.cost);
      expect(stepCosts).toEqual(recorded);

      // Steps: model calls that returned a reply.
      expect(trajectory.info.model_stats.api_calls).toBe(want.steps);
      expect(facts.steps).toBe(want.steps);
      expect(runCase.steps).toBe(want.steps);
      expect(end.api_calls).toBe(want.steps);
      expect(report.stats.turns).toBe(want.steps);
      expect(full.metadata.steps).toBe(want.steps);
      expect(shownCase.steps).toBe(want.steps);
      expect(row.steps).toBe(want.steps);
      expect(detail.steps).toHaveLength(want.steps);

      // Tokens: prompt + completion in the events, uncached input + output in sniffbench's metrics.
      expect(facts.tokens).toMatchObject({ prompt: want.prompt, completion: want.completion });
      // swarm_stop.total_tokens is SwarmSDK's conversation total (seed 002): the last prompt plus every completion.
      expect(stop.total_tokens).toBe((facts.turns.at(-1)?.tokens?.prompt ?? 0) + want.completion);
      expect(runCase.behaviorMetrics.totalTokens).toBe(want.prompt + want.completion);
      expect(shownCase.behaviorMetrics.totalTokens).toBe(want.prompt + want.completion);
      expect(row.tokens).toBe(want.prompt + want.completion);

      // Exit status.
      expect(trajectory.info.exit_status).toBe(want.exit);
      expect(runCase.exit_status).toBe(want.exit);
      expect(end.exit_status).toBe(want.exit);
      expect(report.result.outcome).toBe("success");
      expect(full.metadata.exit_status).toBe(want.exit);
      expect(shownCase.exit_status).toBe(want.exit);
      expect(row.exit_status).toBe(want.exit);
      expect(detail.exit_status).toBe(want.exit);

      // Verdict, with its reason.
      expect(run.eval.instances[id].resolved).toBe(want.resolved);
      expect(runCase).toMatchObject({
        resolved: want.resolved,
        verdict: want.verdict,
        grade: want.resolved ? 10 : 0,
      });
      expect(shownCase).toMatchObject({
        resolved: want.resolved,
        verdict: want.verdict,
        gradedBy: "swebench",
      });
      expect(row).toMatchObject({ resolved: want.resolved, verdict: want.verdict });
      // The exports' status is the harness's (seed 001: passed = completed without tool errors); the verdict is beside it.
      const status = facts.failed_tool_calls > 0 ? "failed" : "passed";
      expect(line.status).toBe(status);
      expect(full.status).toBe(status);
      expect(line).toMatchObject({ resolved: want.resolved, verdict: want.verdict });
      expect(full.metadata.resolved).toBe(want.resolved);
    }
    // calc-1's facts hold the retry, the format error and the timeout.
    expect(readRunFacts(trajectoryOf(CALC))).toMatchObject({ retries: 1, format_errors: 1, timeouts: 1 });
    // The run's totals.
    const totalCost = readJson(trajectoryOf(CALC)).info.model_stats.instance_cost;
    const greetCost = readJson(trajectoryOf(GREET)).info.model_stats.instance_cost;
    expect(run.total_cost).toBeCloseTo(totalCost + greetCost, 6);
    expect(run.totals.steps).toBe(6);
    const root = events.find((event) => event.type === "swarm_stop" && event.swarm_id === run.run_id) as Json;
    expect(root.total_cost).toBeCloseTo(totalCost + greetCost, 12);
    expect(runs).toMatchObject({ id: run.run_id, createdAt: run.started_at });
    expect(run).toMatchObject({ id: run.run_id, createdAt: run.started_at });
  }, 120_000);
});
