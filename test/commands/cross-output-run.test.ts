import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { runCli } from "../helpers/cli.js";
import { type RunWorkspace, runWorkspace, runArgs as workspaceRunArgs } from "../helpers/openai-run.js";
import { completion, OpenAIServer, toolCall } from "../helpers/openai-server.js";
import { tempDir } from "../helpers/tmp.js";
import { viewPageData } from "../helpers/view-page.js";

/**
 * One `swerun run`, every output (console, trajectory, --report, --events, exports, the view), every figure
 * two of them name alike (issue 32, the items a single run shows: wall time and the swarm's duration, the
 * submitting command, step numbers, steps and requests, tokens); a run whose every request failed; a model
 * without a price; the README's first screen and the demo it shows. Checks name the item and are
 * soft, so one run shows every item that fails.
 */

// biome-ignore lint/suspicious/noExplicitAny: outputs are read as JSON
type Json = Record<string, any>;
const readJson = (path: string): Json => JSON.parse(readFileSync(path, "utf8"));
const lines = (text: string): Json[] =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));

const usage = (prompt: number, cached = 0) => ({
  prompt_tokens: prompt,
  completion_tokens: 20,
  total_tokens: prompt + 20,
  ...(cached ? { prompt_tokens_details: { cached_tokens: cached } } : {}),
});
const SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat greeting.txt";

/** A workspace with a price registry for `openai/test-model`, and the environment to run the CLI in. */
const workspace = () => runWorkspace(tempDir());

/** `swerun run` of `model` at `server`, with --report and --events, fast retries, then `extra`. */
function runArgs(
  space: RunWorkspace,
  server: OpenAIServer,
  extra: string[] = [],
  model = "openai/test-model",
) {
  return workspaceRunArgs(space, server, {
    model,
    config: ["model.retry_min_wait=0.01", "model.retry_max_wait=0.02"],
    extra,
    events: true,
  });
}

describe("one run, one story", () => {
  it("tells the same wall time, steps, requests, tokens and submitting command in every output", async () => {
    const space = workspace();
    const server = await OpenAIServer.start();
    const overloaded = { status: 503, headers: { "retry-after": "0" }, body: { error: { message: "busy" } } };
    server.push(
      overloaded,
      {
        body: completion({
          content: "Read it.",
          toolCalls: [toolCall("c1", { command: "cat greeting.txt" })],
          usage: usage(900),
        }),
      },
      // two replies without a command: format errors, each a step
      { body: completion({ content: "Thinking.", usage: usage(1000) }) },
      { body: completion({ content: "Still thinking.", usage: usage(1100, 800) }) },
      {
        body: completion({
          content: "Fix, submit (and one more command that will not run).",
          toolCalls: [
            toolCall("c4", { command: "printf 'hello, world\\n' > greeting.txt" }),
            toolCall("c5", { command: SUBMIT }),
            toolCall("c6", { command: "ls" }),
          ],
          usage: usage(1300, 1000),
        }),
      },
    );
    let result: Awaited<ReturnType<typeof runCli>>;
    try {
      result = await runCli(runArgs(space, server), { cwd: space.dir, env: space.env });
    } finally {
      await server.close();
    }
    expect(result.code, result.stderr).toBe(0);
    const { dir, env } = space;
    const trajectoryPath = join(dir, "run.traj.json");
    const summary = await runCli(["export", trajectoryPath], { env });
    const judge = await runCli(["export", trajectoryPath, "--format", "judge", "-o", join(dir, "j")], {
      env,
    });
    const view = await runCli(["view", trajectoryPath, "-o", join(dir, "view.html")], { env });
    for (const done of [summary, judge, view]) expect(done.code, done.stderr).toBe(0);

    const trajectory = readJson(trajectoryPath);
    const report = readJson(join(dir, "run.report.json"));
    const events = lines(readFileSync(join(dir, "events.jsonl"), "utf8"));
    const line = JSON.parse(summary.stdout);
    const full = lines(readFileSync(join(dir, "j.full.jsonl"), "utf8"))[0] as Json;
    const { page, details } = viewPageData(join(dir, "view.html"));
    const row = page.runs[0].rows[0];
    const detail = details[0] as Json;
    const stop = events.find((event) => event.type === "swarm_stop") as Json;
    const printed = result.stdout;

    // Wall time (item 5): the run's measure, the swarm's duration included.
    const wall = trajectory.info.swerun_timing.wall_time_s;
    expect(line.duration).toBe(Math.round(wall * 1000));
    expect(row.wall_s).toBe(Math.round(wall * 1000) / 1000);
    expect.soft(stop.duration, "item 5: swarm_stop.duration").toBe(Math.round(wall * 1000) / 1000);

    // Steps (item 8): the console numbers them as every output counts them, format errors included.
    const steps = 4;
    expect(report.stats.turns).toBe(steps);
    expect(detail.steps).toHaveLength(steps);
    expect(events.filter((e) => e.type === "agent_step" || e.type === "format_error")).toHaveLength(steps);
    const headers = [...printed.matchAll(/─── step (\d+)/g)].map((match) => Number(match[1]));
    expect.soft(headers, "item 8: the console's step numbers").toEqual([1, 2, 3, 4]);

    // Model calls and request attempts (item 6), named apart and counted once.
    const requests = events.filter((e) => e.type === "llm_api_request").length;
    expect(requests).toBe(5);
    expect(trajectory.info.model_stats.api_calls).toBe(steps);
    expect(report.stats.llm_calls).toBe(requests);
    expect
      .soft(printed, "item 6: the console's figures")
      .toContain(`${steps} steps · ${requests} model requests (1 failed)`);
    expect.soft(printed, "item 6: no call count named like the report's").not.toMatch(/model calls/);

    // Cost (item 1): the console prints the trajectory's.
    const cost = trajectory.info.model_stats.instance_cost;
    expect(report.stats).toBeDefined();
    expect.soft(printed, "item 1: the console's cost").toContain(`$${cost.toFixed(4)}`);
    expect(stop.total_cost).toBe(cost);

    // Tokens (item 4): uncached input + output, summed over the calls, in the events and the view.
    const tokens = 900 + 1000 + (1100 - 800) + (1300 - 1000) + 4 * 20;
    expect(row.tokens).toBe(tokens);
    expect.soft(stop.total_tokens, "item 4: swarm_stop.total_tokens").toBe(tokens);

    // The submitting command (item 7): mini-swe-agent's trajectory says it was not executed; it ran, and every
    // output says it ran, for how long, and when.
    const observations = (trajectory.messages as Json[]).filter((m) => m.role === "tool");
    const submitObservation = observations.find((m) => m.tool_call_id === "c5") as Json;
    expect(submitObservation.extra).toMatchObject({
      returncode: -1,
      exception_info: "action was not executed",
    });
    const results = events.filter((e) => e.type === "tool_result");
    const submitted = results.find((e) => e.tool_call_id === "c5") as Json;
    expect(submitted.metadata.returncode).toBe(0);
    expect(results.some((e) => e.tool_call_id === "c6")).toBe(false); // it never ran
    const duration = submitted.metadata.duration;
    const entry = report.timeline.filter((e: Json) => e.type === "tool_call").at(-1);
    expect(entry).toMatchObject({ name: "echo", succeeded: true });
    expect.soft(entry.duration_s, "item 7: report duration_s").toBeCloseTo(duration, 3);
    const step = full.trajectory.filter((s: Json) => s.type === "tool_call").at(-1);
    expect(step).toMatchObject({ name: "echo", status: "completed", returncode: 0 });
    expect.soft(step.duration, "item 7: judge duration").not.toBeNull();
    expect
      .soft(Math.abs((step.duration ?? Number.NaN) - duration * 1000), "item 7: judge duration")
      .toBeLessThanOrEqual(1);
    expect.soft(step.timestamp, "item 7: judge timestamp").not.toBeNull();
    const call = detail.steps.at(-1).calls.at(-1);
    expect(call.returncode).toBe(0);
    expect.soft(call.duration_s, "item 7: view duration").toBeCloseTo(duration, 5);
    // Only `ls` was not executed; the console says so of it alone.
    const notExecuted = printed.split("\n").filter((text) => text.includes("action was not executed"));
    expect.soft(notExecuted, "item 7: commands the console says did not run").toHaveLength(1);
    const submitLine = printed
      .split("\n")
      .find((text) => text.includes("submitted") && text.startsWith("exit"));
    expect
      .soft(submitLine ?? "", "item 7: the console's line for the command that submitted")
      .toMatch(/^exit 0 · \d+\.\d\d s · submitted$/);

    // The report's seed items (item 9): settings are numbers; a retried HTTP request is no compaction retry.
    for (const key of ["temperature", "top_p", "max_output_tokens"])
      expect.soft(typeof report.settings[key], `item 9: settings.${key}`).toBe("number");
    for (const llm of report.timeline.filter((e: Json) => e.type === "llm_call")) {
      expect.soft(llm.is_retry, "item 9: is_retry").toBe(false);
      expect(llm).not.toHaveProperty("retry_reason");
    }
  }, 60_000);

  it("names steps, model calls and request attempts apart when every attempt failed", async () => {
    const space = workspace();
    const server = await OpenAIServer.start();
    const overloaded = { status: 503, headers: { "retry-after": "0" }, body: { error: { message: "busy" } } };
    server.push(overloaded, overloaded, overloaded);
    let result: Awaited<ReturnType<typeof runCli>>;
    try {
      result = await runCli(runArgs(space, server, ["-c", "model.retry_attempts=3"]), {
        cwd: space.dir,
        env: space.env,
      });
    } finally {
      await server.close();
    }
    expect(result.code).toBe(2);
    const trajectory = readJson(join(space.dir, "run.traj.json"));
    const report = readJson(join(space.dir, "run.report.json"));
    const events = lines(readFileSync(join(space.dir, "events.jsonl"), "utf8"));
    // mini-swe-agent counts the call it began; no reply came (no step); three requests were sent.
    expect(trajectory.info.model_stats.api_calls).toBe(1);
    expect(report.stats.turns).toBe(0);
    expect(report.stats.llm_calls).toBe(3);
    expect(events.filter((e) => e.type === "llm_api_request")).toHaveLength(3);
    expect.soft(result.stdout, "item 6: the console").toContain("0 steps · 3 model requests (3 failed)");
    expect.soft(result.stdout, "item 6: the console").not.toMatch(/1 model calls/);
  }, 60_000);

  it("refuses a model without a price before its first request (item 10)", async () => {
    const space = workspace();
    const server = await OpenAIServer.start();
    server.push({ body: completion({ toolCalls: [toolCall("c1", { command: "ls" })], usage: usage(10) }) });
    let result: Awaited<ReturnType<typeof runCli>>;
    try {
      result = await runCli(runArgs(space, server, [], "openai/unpriced-model"), {
        cwd: space.dir,
        env: space.env,
      });
    } finally {
      await server.close();
    }
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no price known for model "openai\/unpriced-model"/);
    expect.soft(server.requests, "item 10: requests sent before the refusal").toHaveLength(0);
  }, 60_000);

  it("shows the demo's submitted diff at the end, as the README's first screen does (item 12)", async () => {
    const dir = tempDir();
    const demo = await runCli(
      ["run", "-c", "demo", "--yolo", "--exit-immediately", "-o", join(dir, "demo.traj.json")],
      { cwd: dir },
    );
    expect(demo.code, demo.stderr).toBe(0);
    const submission: string = readJson(join(dir, "demo.traj.json")).info.submission;
    expect(submission).toMatch(/^diff --git/);
    expect.soft(demo.stdout, "item 12: the demo prints its diff").toContain(`submission:\n${submission}`);
    const readme = readFileSync(join(packageRoot(), "README.md"), "utf8");
    const first = readme.slice(readme.indexOf("\n## "), readme.indexOf("\n## ", readme.indexOf("\n## ") + 1));
    const heading = first.split("\n")[1] ?? "";
    const commands = (/```bash\n([\s\S]*?)```/.exec(first)?.[1] ?? "").trim().split("\n");
    const named = { one: 1, two: 2, three: 3, four: 4 }[
      /\b(one|two|three|four) commands\b/.exec(heading)?.[1] ?? ""
    ];
    if (named !== undefined) expect.soft(commands, `item 12: "${heading}"`).toHaveLength(named);
    // The first screen shows the end of the demo: the diff it submitted, as it really is.
    for (const text of submission.split("\n").filter((line) => /^[-+] /.test(line)))
      expect.soft(first, "item 12: the README shows the demo's diff").toContain(text);
  }, 60_000);
});
