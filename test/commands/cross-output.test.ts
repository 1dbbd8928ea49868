import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { describeDocker } from "../helpers/docker.js";
import { completion, OpenAIServer, TEST_KEY, TEST_PRICES, toolCall } from "../helpers/openai-server.js";
import { tempDir } from "../helpers/tmp.js";
import { viewPageData } from "../helpers/view-page.js";

/**
 * One batch, every output, every figure two outputs name alike (issue 32). Three instances run one after the
 * other against the local OpenAI server, graded with `--eval`:
 * - calc-1: a retried request (HTTP 503), a command, a reply cut at the token limit (a format error), a
 *   command that times out, the fix (prompt partly read from the cache), the submission: resolved;
 * - greet-2: submits an empty patch (Submitted, and an empty patch: graded empty_patch);
 * - count-3: the same reply without a command three times: RepeatedFormatError (it did not complete).
 * The costs are picked so that summing the instances' 4-decimal costs (0.0112 + 0.0007 + 0.0010) gives
 * another figure than the run's cost rounded once (0.0130), and the run's cost is past a cent.
 * Every check names the issue's item it covers; the checks are soft, so a run shows every item that fails.
 */

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
const COUNT = "swerun-demo__count-3";
const IDS = [CALC, GREET, COUNT];

/** A call's usage; `cached` prompt tokens were read from the cache. */
const usage = (prompt: number, cached = 0, completionTokens = 20) => ({
  prompt_tokens: prompt,
  completion_tokens: completionTokens,
  total_tokens: prompt + completionTokens,
  ...(cached ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
});

/** Each instance's calls (prompt, cached), as the server answers them. */
const CALLS: Record<string, Array<[number, number]>> = {
  [CALC]: [
    [2000, 0],
    [2200, 0],
    [2400, 0],
    [2600, 600],
    [3280, 1000],
  ],
  [GREET]: [[700, 0]],
  [COUNT]: [
    [300, 0],
    [300, 0],
    [300, 0],
  ],
};
const price = TEST_PRICES["openai/test-model"];
/** What each instance costs and counts, computed here from the usages the server sends. */
const expected = Object.fromEntries(
  IDS.map((id) => {
    const calls = CALLS[id] ?? [];
    const uncached = calls.reduce((sum, [prompt, cached]) => sum + prompt - cached, 0);
    const cached = calls.reduce((sum, [, read]) => sum + read, 0);
    const output = calls.length * 20;
    const cost =
      uncached * price.input_cost_per_token +
      cached * price.cache_read_input_token_cost +
      output * price.output_cost_per_token;
    // Total tokens: input not read from (or written to) the cache, plus output.
    return [id, { steps: calls.length, cost, totalTokens: uncached + output, cached }];
  }),
) as Record<string, { steps: number; cost: number; totalTokens: number; cached: number }>;
const round4 = (value: number) => Math.round(value * 10000) / 10000;
const usd = (value: number) => `$${value.toFixed(4)}`;

/** The server's answers, in the order the batch asks (one worker: calc, greet, count). */
function script(server: OpenAIServer): void {
  const calc = CALLS[CALC] ?? [];
  const reply = (index: number, options: Parameters<typeof completion>[0]) => {
    const [prompt, cached] = calc[index] ?? [0, 0];
    return { body: completion({ ...options, usage: usage(prompt, cached) }) };
  };
  server.push(
    { status: 503, headers: { "retry-after": "0" }, body: { error: { message: "overloaded" } } },
    reply(0, { content: "Look first.", toolCalls: [toolCall("c1", { command: "ls && cat calc.sh" })] }),
    reply(1, { content: "I will explain at length why", finishReason: "length" }),
    reply(2, { content: "Is it slow?", toolCalls: [toolCall("c3", { command: "sleep 5" })] }),
    reply(3, {
      content: "Fix it.",
      toolCalls: [toolCall("c4", { command: "sed -i 's/\\$1 - \\$2/$1 + $2/' calc.sh && bash test.sh" })],
    }),
    reply(4, {
      content: "Submit.",
      toolCalls: [
        toolCall("c5", {
          command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached",
        }),
      ],
    }),
    {
      body: completion({
        content: "Nothing to change.",
        toolCalls: [toolCall("c6", { command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" })],
        usage: usage(700),
      }),
    },
    ...[1, 2, 3].map(() => ({ body: completion({ content: "Let me think.", usage: usage(300) }) })),
  );
}

/** The lines of a `swerun runs` box (from `╭` to `╰`), without colours. */
function boxLines(text: string): string[] {
  const all = stripVTControlCharacters(text).split("\n");
  const top = all.findIndex((line) => line.startsWith("╭"));
  const bottom = all.findIndex((line, index) => index > top && line.startsWith("╰"));
  return all.slice(top, bottom + 1);
}

await describeDocker("one set of facts across every output", () => {
  it("agrees on every figure two outputs of one batch name alike", async () => {
    const dir = tempDir();
    const settings = join(dir, "settings");
    mkdirSync(settings, { recursive: true });
    writeFileSync(join(settings, "prices.json"), JSON.stringify(TEST_PRICES));
    const server = await OpenAIServer.start();
    script(server);
    const runsDir = join(dir, "runs");
    const out = join(runsDir, "batch");
    const env = { OPENAI_API_KEY: TEST_KEY, SWERUN_GLOBAL_CONFIG_DIR: settings };
    let batch: Awaited<ReturnType<typeof runCli>>;
    try {
      batch = await runCli(
        [
          "swebench",
          "--subset",
          "demo",
          "--instance-ids",
          IDS.join(","),
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
      expect(batch.code, batch.stderr).toBe(0);
      expect(batch.stdout).toContain("resolved: 1/3 (1 graded, 2 empty, 0 errors)");
    } finally {
      await server.close();
    }
    const trajectoryOf = (id: string) => join(out, id, `${id}.traj.json`);
    for (const id of IDS) {
      const report = join(dir, `${id}.report.json`);
      expect((await runCli(["report", trajectoryOf(id), "-o", report], { env })).code).toBe(0);
    }
    expect((await runCli(["export", out, "-o", join(dir, "summary.jsonl")], { env })).code).toBe(0);
    expect((await runCli(["export", out, "--format", "judge", "-o", join(dir, "judge")], { env })).code).toBe(
      0,
    );
    const dirFlag = ["--dir", runsDir];
    const shown = await runCli(["runs", "show", out, "--json", ...dirFlag], { env });
    const shownText = await runCli(["runs", "show", out, ...dirFlag], { env });
    const listed = await runCli(["runs", "list", "--json", ...dirFlag], { env });
    const listedText = await runCli(["runs", "list", ...dirFlag], { env });
    const compared = await runCli(["runs", "compare", out, out, ...dirFlag], { env });
    const comparedJson = await runCli(["runs", "compare", out, out, "--json", ...dirFlag], { env });
    const reports = await runCli(["report", out], { env });
    for (const result of [shown, shownText, listed, listedText, compared, comparedJson, reports])
      expect(result.code, result.stderr).toBe(0);
    expect((await runCli(["view", out, "-o", join(dir, "view.html")], { env })).code).toBe(0);

    const run = readJson(join(out, "run.json"));
    const events = lines(join(dir, "events.jsonl"));
    const summary = lines(join(dir, "summary.jsonl"));
    const judge = lines(join(dir, "judge.full.jsonl"));
    const markdown = readFileSync(join(dir, "judge.md"), "utf8");
    const runs = JSON.parse(shown.stdout);
    const list = (JSON.parse(listed.stdout) as Json[]).find((entry) => entry.id === run.run_id) as Json;
    const comparison = JSON.parse(comparedJson.stdout);
    const view = viewPageData(join(dir, "view.html"));
    const totals = Object.fromEntries(view.page.runs[0].totals as Array<[string, string]>);
    const harness = readJson(join(out, run.eval.report));
    const printed = `${batch.stdout}\n${batch.stderr}`;

    for (const id of IDS) {
      const want = expected[id] as (typeof expected)[string];
      const trajectory = readJson(trajectoryOf(id));
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
      const wall = Math.round(timing.wall_time_s * 1000) / 1000;

      // Wall time (item 5): the batch's measure, the same in every output, the swarm's duration included.
      expect(timing.wall_time_s).toBeGreaterThan(0);
      expect(runCase.duration_s).toBe(wall);
      expect(runCase.behaviorMetrics.wallTimeSeconds).toBe(wall);
      expect(end.duration).toBe(wall);
      expect.soft(stop.duration, `item 5: ${id} swarm_stop.duration`).toBe(wall);
      expect(shownCase.duration_s).toBe(wall);
      expect(row.wall_s).toBe(wall);
      expect(line.duration).toBe(Math.round(timing.wall_time_s * 1000));
      expect(Math.abs(full.timing.end - full.timing.start - line.duration)).toBeLessThanOrEqual(1);

      // Cost (item 1): the trajectory's, unrounded wherever a file keeps it; each step's own in the view.
      expect(cost).toBeCloseTo(want.cost, 12);
      expect(runCase.cost).toBe(cost);
      expect(runCase.behaviorMetrics.costUsd).toBe(round4(cost));
      expect(end.cost).toBe(cost);
      expect(stop.total_cost).toBe(cost);
      expect.soft(full.metadata.cost, `item 1: ${id} judge metadata cost`).toBe(cost);
      expect(shownCase.cost).toBe(cost);
      expect(row.cost).toBe(cost);
      const stepCosts = (detail.steps as Json[]).map((step) => step.cost);
      expect(stepCosts.reduce((sum: number, value: number) => sum + value, 0)).toBeCloseTo(cost, 12);

      // Steps, model calls and request attempts (item 6).
      expect(trajectory.info.model_stats.api_calls).toBe(want.steps);
      expect(runCase.steps).toBe(want.steps);
      expect(end.api_calls).toBe(want.steps);
      expect(report.stats.turns).toBe(want.steps);
      expect(full.metadata.steps).toBe(want.steps);
      expect(shownCase.steps).toBe(want.steps);
      expect(row.steps).toBe(want.steps);
      expect(detail.steps).toHaveLength(want.steps);
      const requests = own.filter((event) => event.type === "llm_api_request").length;
      expect(report.stats.llm_calls).toBe(requests);

      // Tokens (item 4): one total (uncached input + output) wherever an output says tokens.
      expect(runCase.behaviorMetrics.totalTokens).toBe(want.totalTokens);
      expect(runCase.behaviorMetrics.cacheReadTokens).toBe(want.cached);
      expect(shownCase.behaviorMetrics.totalTokens).toBe(want.totalTokens);
      expect(row.tokens).toBe(want.totalTokens);
      expect.soft(stop.total_tokens, `item 4: ${id} swarm_stop.total_tokens`).toBe(want.totalTokens);
      const perCall = own
        .filter((event) => event.type === "llm_api_response" && event.usage)
        .reduce((sum, event) => sum + event.usage.total_tokens, 0);
      expect.soft(perCall, `item 4: ${id} llm_api_response usage.total_tokens summed`).toBe(want.totalTokens);

      // Submitted and an empty patch (item 2): two facts, two names.
      const submitted = trajectory.info.exit_status === "Submitted";
      const empty = trajectory.info.submission.trim() === "";
      expect(end.exit_status).toBe(trajectory.info.exit_status);
      expect(runCase.exit_status).toBe(trajectory.info.exit_status);
      expect(row.exit_status).toBe(trajectory.info.exit_status);
      expect(full.metadata.exit_status).toBe(trajectory.info.exit_status);
      expect.soft(runCase.submitted, `item 2: ${id} run.json submitted`).toBe(submitted);
      expect.soft(runCase.empty_patch, `item 2: ${id} run.json empty_patch`).toBe(empty);
      expect.soft(shownCase.submitted, `item 2: ${id} runs show submitted`).toBe(submitted);
      expect.soft(row.submitted, `item 2: ${id} view submitted`).toBe(submitted);
      expect.soft(row.empty_patch, `item 2: ${id} view empty_patch`).toBe(empty);
      expect(harness.empty_patch_ids.includes(id)).toBe(empty);

      // Completed or not (item 3): the exports' status and the report's outcome read one definition.
      const completed = ["Submitted", "LimitsExceeded", "TimeExceeded"].includes(trajectory.info.exit_status);
      expect.soft(report.result.outcome === "error", `item 3: ${id} report outcome`).toBe(!completed);
      expect.soft(line.status === "error", `item 3: ${id} summary status`).toBe(!completed);
      expect.soft(full.status, `item 3: ${id} judge status`).toBe(line.status);
      const record = markdown.split("## Evaluation Record: ").find((part) => part.startsWith(id)) ?? "";
      expect(record).toContain(`**Status:** ${full.status}\n`);

      // The report's seed items (item 9): settings are numbers; no compaction retries; guardrails only for a
      // repeated identical format error.
      for (const key of ["temperature", "top_p", "max_output_tokens"])
        expect.soft(typeof report.settings[key], `item 9: ${id} settings.${key}`).toBe("number");
      for (const call of report.timeline.filter((entry: Json) => entry.type === "llm_call")) {
        expect.soft(call.is_retry, `item 9: ${id} is_retry`).toBe(false);
        expect(call).not.toHaveProperty("retry_reason");
      }
      const guardrails = report.timeline.filter((entry: Json) => entry.type === "guardrail");
      const levels = guardrails.map((entry: Json) => entry.level);
      expect.soft(levels, `item 9: ${id} guardrail levels`).toEqual(id === COUNT ? ["nudge", "stop"] : []);
      // The judge's steps are the seed's kinds (item 9), a format error a message marked as one.
      for (const step of full.trajectory)
        expect
          .soft(["thought", "message", "tool_call"], `item 9: ${id} judge step kind`)
          .toContain(step.type);

      // The submitting command ran (item 7): measured in every output that shows it.
      if (submitted) {
        const submit = full.trajectory.filter((step: Json) => step.type === "tool_call").at(-1);
        const entry = report.timeline.filter((e: Json) => e.type === "tool_call").at(-1);
        const result = own.filter((event) => event.type === "tool_result").at(-1) as Json;
        const shownCall = (detail.steps as Json[]).at(-1)?.calls.at(-1);
        expect(result.metadata.returncode).toBe(0);
        expect(entry.succeeded).toBe(true);
        expect(shownCall.returncode).toBe(0);
        const ms = result.metadata.duration * 1000;
        expect
          .soft(Math.abs((submit.duration ?? Number.NaN) - ms), `item 7: ${id} judge duration`)
          .toBeLessThanOrEqual(1);
        expect.soft(submit.timestamp, `item 7: ${id} judge timestamp`).not.toBeNull();
        expect
          .soft(entry.duration_s, `item 7: ${id} report duration_s`)
          .toBeCloseTo(result.metadata.duration, 3);
        expect
          .soft(shownCall.duration_s, `item 7: ${id} view duration_s`)
          .toBeCloseTo(result.metadata.duration, 5);
      }
    }

    // The run's cost (item 1): summed unrounded, rounded once wherever it is printed or rounded.
    const total = IDS.reduce((sum, id) => sum + (expected[id]?.cost ?? 0), 0);
    const roundedSum = IDS.reduce((sum, id) => sum + round4(expected[id]?.cost ?? 0), 0);
    expect(usd(roundedSum), "the scenario's costs must round apart").not.toBe(usd(total));
    const root = events.find((event) => event.type === "swarm_stop" && event.swarm_id === run.run_id) as Json;
    expect(run.total_cost).toBeCloseTo(total, 12);
    expect(root.total_cost).toBeCloseTo(total, 12);
    expect.soft(run.totals.costUsd, "item 1: run.json totals.costUsd").toBe(round4(total));
    expect.soft(runs.totals.costUsd, "item 1: runs show --json totals.costUsd").toBe(round4(total));
    expect.soft(list.cost, "item 1: runs list --json cost").toBe(round4(total));
    expect.soft(shownText.stdout, "item 1: runs show cost").toContain(`Cost: ${usd(total)}`);
    const listRow = listedText.stdout.split("\n").find((row) => row.includes(run.run_id)) ?? "";
    expect.soft(listRow, "item 1: runs list cost").toContain(usd(total));
    expect
      .soft(compared.stdout, "item 1: runs compare cost")
      .toContain(`Total cost: ${usd(total)} → ${usd(total)}`);
    expect.soft(comparison.summary.a.costUsd, "item 1: runs compare --json cost").toBe(round4(total));
    expect.soft(totals.Cost, "item 1: view cost").toBe(usd(total));
    expect.soft(printed, "item 1: the console's total cost").toContain(`total cost: ${usd(total)}`);

    // The run's tokens (item 4): the instances' totals summed, the same figure everywhere.
    const tokens = IDS.reduce((sum, id) => sum + (expected[id]?.totalTokens ?? 0), 0);
    expect(run.totals.totalTokens).toBe(tokens);
    expect(runs.totals.totalTokens).toBe(tokens);
    expect(comparison.summary.a.totalTokens).toBe(tokens);
    expect.soft(totals.Tokens, "item 4: view tokens").toBe(tokens.toLocaleString("en-US"));
    expect.soft(root.total_tokens, "item 4: the batch's swarm_stop.total_tokens").toBe(tokens);

    // Submitted and empty patches (item 2), counted apart.
    const submittedIds = IDS.filter((id) => readJson(trajectoryOf(id)).info.exit_status === "Submitted");
    const emptyIds = IDS.filter((id) => readJson(trajectoryOf(id)).info.submission.trim() === "");
    expect(submittedIds).toEqual([CALC, GREET]);
    expect(emptyIds).toEqual([GREET, COUNT]);
    expect.soft(runs.summary.submitted, "item 2: runs show --json submitted").toBe(2);
    expect.soft(runs.summary.empty_patches, "item 2: runs show --json empty patches").toBe(2);
    expect.soft(list.submitted, "item 2: runs list --json submitted").toBe(2);
    expect.soft(shownText.stdout, "item 2: runs show").toContain("2 submitted (2 empty patches)");
    expect.soft(totals.Submitted, "item 2: view submitted").toBe("2");
    expect.soft(totals["Empty patches"], "item 2: view empty patches").toBe("2");
    // The harness names its own figures: every prediction is "submitted" to it; empty patches are ours.
    expect(harness.submitted_instances).toBe(Object.keys(readJson(join(out, "preds.json"))).length);
    expect(harness.empty_patch_instances).toBe(emptyIds.length);

    // Steps (item 6): the console's line of each instance names steps and requests as the facts count them.
    for (const id of IDS) {
      const steps = expected[id]?.steps ?? 0;
      const requests = events.filter(
        (event) => event.swarm_id === `${run.run_id}/${id}` && event.type === "llm_api_request",
      ).length;
      const shownLine = printed.split("\n").find((text) => text.includes(`] ${id}:`)) ?? "";
      expect
        .soft(shownLine, `item 6: ${id} console line`)
        .toContain(
          `${steps} step${steps === 1 ? "" : "s"} · ${requests} model request${requests === 1 ? "" : "s"}`,
        );
    }

    // The batch's root swarm (item 9, seed 002): it names its last agent.
    expect.soft(root.last_agent, "item 9: the batch's swarm_stop.last_agent").toBe("swerun");
    expect(root.agents_involved).toEqual(["swerun"]);

    // `runs show` (item 9, seed 004): the box's title holds the whole run id, and every line is as wide.
    const box = boxLines(shownText.stdout);
    expect.soft(box[0], "item 9: runs show title").toContain(`Run: ${run.run_id} `);
    const widths = new Set(box.map((line) => line.length));
    expect.soft(widths.size, `item 9: runs show box widths ${[...widths].join(", ")}`).toBe(1);
    expect
      .soft(new Set(boxLines(listedText.stdout).map((line) => line.length)).size, "item 9: runs list box")
      .toBe(1);

    // `swerun report <folder>` (item 11): JSON Lines, one report per instance (in path order), each the one
    // `-o` writes.
    const reportLines = reports.stdout.trim().split("\n");
    expect.soft(reportLines, "item 11: one line per instance").toHaveLength(IDS.length);
    const parsed = reportLines.flatMap((text) => {
      try {
        return [JSON.parse(text)];
      } catch {
        return [];
      }
    });
    expect.soft(parsed, "item 11: every line parses").toHaveLength(IDS.length);
    expect
      .soft(parsed, "item 11: the reports")
      .toEqual([...IDS].sort().map((id) => readJson(join(dir, `${id}.report.json`))));

    expect(runs).toMatchObject({ id: run.run_id, createdAt: run.started_at });
    expect(run).toMatchObject({ id: run.run_id, createdAt: run.started_at });
  }, 180_000);
});
