import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { runCli } from "../helpers/cli.js";
import { describeDocker, dockerFixture } from "../helpers/docker.js";
import { tempDir } from "../helpers/tmp.js";

const PLANTED = "planted-secret-5c1d9e7a";
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** Every call of the demo's scripts gets a cost and a token usage, and calc-1 prints the planted secret. */
function demoWithUsage(dir: string): string {
  cpSync(join(packageRoot(), "config", "swebench-demo"), dir, { recursive: true });
  const path = join(dir, "instances.json");
  const instances = readJson(path) as Array<Record<string, unknown>>;
  for (const instance of instances) {
    const outputs = instance.swerun_scripted_outputs as Array<{
      content: string;
      extra: Record<string, unknown>;
    }>;
    outputs.forEach((output, index) => {
      output.extra.cost = 0.001 * (index + 1);
      output.extra.usage = { prompt_tokens: 100 * (index + 1), completion_tokens: 7 };
    });
    if (instance.instance_id === "swerun-demo__calc-1") {
      const first = outputs[0];
      if (first) first.extra.actions = [{ command: "ls && echo $SWERUN_PLANTED" }];
    }
  }
  writeFileSync(path, JSON.stringify(instances));
  return path;
}

/** The order an instance's events must come in. */
const INSTANCE_ORDER =
  /^swarm_start agent_start user_prompt( agent_step tool_call tool_result)+ agent_stop instance_end swarm_stop$/;

await describeDocker("--events on a Docker batch", () => {
  beforeAll(async () => {
    await dockerFixture();
  });

  it("writes whole lines from 2 workers, complete ordered swarms, totals equal to the trajectories' sums", async () => {
    const dir = tempDir();
    const dataset = demoWithUsage(join(dir, "demo"));
    const out = join(dir, "out");
    const path = join(dir, "events.jsonl");
    const result = await runCli(
      [
        "swebench",
        "--subset",
        dataset,
        "--environment-class",
        "docker",
        "-c",
        "swebench",
        "-c",
        "swebench-demo",
        "-w",
        "2",
        "-o",
        out,
        "-q",
        "-c",
        'environment.run_args=["--rm","--network","none"]',
        "-c",
        'environment.forward_env=["SWERUN_PLANTED"]',
        "--events",
        path,
      ],
      { env: { SWERUN_PLANTED: PLANTED } },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain(PLANTED);
    expect(text).toContain("[REDACTED]");
    const events = text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const runId = readJson(join(out, "run.json")).run_id as string;
    expect(events[0]).toMatchObject({ type: "swarm_start", swarm_id: runId, execution_id: runId });
    const stop = events.at(-1);
    expect(stop).toMatchObject({ type: "swarm_stop", swarm_id: runId, success: true });
    const stamps = events.map((event) => String(event.timestamp));
    expect([...stamps].sort()).toEqual(stamps);

    const ids = ["swerun-demo__calc-1", "swerun-demo__count-3", "swerun-demo__greet-2"];
    let cost = 0;
    let tokens = 0;
    for (const id of ids) {
      const own = events.filter((event) => event.swarm_id === `${runId}/${id}`);
      for (const event of own) expect(event).toMatchObject({ parent_swarm_id: runId, execution_id: runId });
      expect(own.map((event) => event.type).join(" ")).toMatch(INSTANCE_ORDER);
      const trajectory = readJson(join(out, id, `${id}.traj.json`));
      const assistant = (
        trajectory.messages as Array<{ role: string; extra?: { usage?: Record<string, number> } }>
      ).filter((message) => message.role === "assistant");
      // The instance's total tokens (as every output counts them): each call's input (none cached here) + output.
      const instanceTokens = assistant.reduce(
        (sum, message) =>
          sum + (message.extra?.usage?.prompt_tokens ?? 0) + (message.extra?.usage?.completion_tokens ?? 0),
        0,
      );
      const instanceCost = trajectory.info.model_stats.instance_cost as number;
      expect(own.filter((event) => event.type === "agent_step")).toHaveLength(assistant.length);
      expect(own.at(-1)).toMatchObject({ type: "swarm_stop", success: true, total_tokens: instanceTokens });
      expect(own.at(-1)?.total_cost).toBeCloseTo(instanceCost, 12);
      expect(own.at(-2)).toMatchObject({ type: "instance_end", instance_id: id, exit_status: "Submitted" });
      expect(own.at(-2)?.patch_bytes).toBe(Buffer.byteLength(trajectory.info.submission));
      cost += instanceCost;
      tokens += instanceTokens;
    }
    expect(tokens).toBeGreaterThan(0);
    expect(stop?.total_tokens).toBe(tokens);
    expect(stop?.total_cost).toBeCloseTo(cost, 12);
  });
});
