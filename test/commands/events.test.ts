import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { joinDashValues } from "../../src/util/argv.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const parseLines = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("--events", () => {
  it("run --events - puts only JSON lines on stdout, and the console on stderr", async () => {
    const dir = tempDir();
    const out = join(dir, "run.traj.json");
    const result = await runCli([
      "run",
      "-c",
      "demo",
      "--yolo",
      "--exit-immediately",
      "--events",
      "-",
      "-o",
      out,
    ]);
    expect(result.code).toBe(0);
    const events = parseLines(result.stdout);
    expect(events.length).toBeGreaterThan(10);
    expect(result.stdout.endsWith("\n")).toBe(true);
    expect(events[0]).toMatchObject({ type: "swarm_start", swarm_id: "main", agent: "swerun" });
    expect(events.at(-1)).toMatchObject({ type: "swarm_stop", success: true, agents_involved: ["swerun"] });
    expect(new Set(events.map((event) => event.execution_id)).size).toBe(1);
    expect(result.stderr).toContain("exit status: Submitted");
    expect(result.stderr).toContain("─── step 1");
  });

  it("appends to a file, one run after another, each a complete swarm", async () => {
    const dir = tempDir();
    const path = join(dir, "logs", "events.jsonl");
    for (const n of [1, 2]) {
      const out = join(dir, `run${n}.traj.json`);
      const result = await runCli([
        "run",
        "-c",
        "demo",
        "--yolo",
        "--exit-immediately",
        "--events",
        path,
        "-o",
        out,
      ]);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("exit status: Submitted");
    }
    const events = parseLines(readFileSync(path, "utf8"));
    expect(events.filter((event) => event.type === "swarm_start")).toHaveLength(2);
    expect(events.filter((event) => event.type === "swarm_stop")).toHaveLength(2);
    expect(new Set(events.map((event) => event.execution_id)).size).toBe(2);
  });

  it("names an unwritable events path in one line, exit 2, before anything runs", async () => {
    const dir = tempDir();
    const result = await runCli([
      "run",
      "-c",
      "demo",
      "--yolo",
      "--events",
      "/proc/swerun/events.jsonl",
      "-o",
      join(dir, "t.json"),
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^swerun: --events \/proc\/swerun\/events\.jsonl: cannot create its folder/,
    );
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("swebench writes a root swarm, a child swarm per instance, and instance_skipped on a resume", async () => {
    const dir = tempDir();
    const out = join(dir, "batch");
    const path = join(dir, "events.jsonl");
    const batch = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--environment-class",
      "local",
      "-w",
      "2",
      "-o",
      out,
      "-q",
      "--events",
      path,
    ]);
    expect(batch.code).toBe(0);
    const events = parseLines(readFileSync(path, "utf8"));
    const root = events[0];
    expect(root).toMatchObject({ type: "swarm_start", agent: "swerun" });
    const runId = String(root?.swarm_id);
    expect(events.at(-1)).toMatchObject({ type: "swarm_stop", swarm_id: runId, success: true });
    const children = events.filter((event) => event.parent_swarm_id === runId);
    expect(new Set(children.map((event) => event.swarm_id))).toEqual(
      new Set(["calc-1", "greet-2", "count-3"].map((id) => `${runId}/swerun-demo__${id}`)),
    );
    const ends = events.filter((event) => event.type === "instance_end");
    expect(ends.map((event) => event.exit_status)).toEqual(["Submitted", "Submitted", "Submitted"]);
    for (const end of ends) expect(end.patch_bytes).toBeGreaterThan(0);

    const again = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--environment-class",
      "local",
      "-o",
      out,
      "--events",
      "-",
    ]);
    expect(again.code).toBe(0);
    // Standard output holds only the events; the resumed batch keeps its run id, so its root swarm too.
    const resumed = parseLines(again.stdout);
    expect(resumed[0]).toMatchObject({ type: "swarm_start", swarm_id: runId, execution_id: runId });
    expect(again.stderr).toContain("exit statuses: Submitted 3");
    const skipped = resumed.filter((event) => event.type === "instance_skipped");
    expect(skipped.map((event) => event.instance_id)).toEqual(
      ["calc-1", "greet-2", "count-3"].map((id) => `swerun-demo__${id}`),
    );
    expect(resumed.at(-1)).toMatchObject({ type: "swarm_stop", swarm_id: runId, total_tokens: 0 });
  });

  it("replay writes the replayed steps as agent replay, and the model that carries on as swerun", async () => {
    const dir = tempDir();
    const recorded = join(dir, "run.traj.json");
    expect((await runCli(["run", "-c", "demo", "--yolo", "--exit-immediately", "-o", recorded])).code).toBe(
      0,
    );
    const replay = await runCli([
      "replay",
      recorded,
      "-c",
      "demo",
      "--until",
      "2",
      "--continue",
      "--yolo",
      "--exit-immediately",
      "-o",
      join(dir, "replay.traj.json"),
      "--events",
      "-",
    ]);
    expect(replay.code).toBe(0);
    expect(replay.stderr).toContain("takes over after step 2");
    const events = parseLines(replay.stdout);
    const starts = events.filter((event) => event.type === "agent_start");
    expect(starts.map((event) => event.agent)).toEqual(["replay", "swerun"]);
    expect(events.filter((event) => event.type === "agent_step" && event.agent === "replay")).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({
      type: "swarm_stop",
      success: true,
      agents_involved: ["replay", "swerun"],
    });
  });

  it("cac gets `--events -` as one value", () => {
    expect(joinDashValues(["node", "cli", "run", "--events", "-", "-o", "x"])).toEqual([
      "node",
      "cli",
      "run",
      "--events=-",
      "-o",
      "x",
    ]);
  });
});
