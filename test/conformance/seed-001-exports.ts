import { expect } from "vitest";
import { hasType, itemRow, type Json, type SeedCheck, type SeedOutputs, type SeedRow } from "./outputs.js";

/** Every summary line and full judge record, single runs and batch instances, each with its trajectory. */
const summaries = (o: SeedOutputs) => [
  ...Object.values(o.runs).map((r) => ({ name: r.run.name, line: r.summary, trajectory: r.trajectory })),
  ...o.batch.summaries.map((line: Json) => ({
    name: line.id,
    line,
    trajectory: o.batch.trajectories[line.id],
  })),
];
const records = (o: SeedOutputs) => [
  ...Object.values(o.runs).map((r) => ({ name: r.run.name, record: r.judge, trajectory: r.trajectory })),
  ...o.batch.judges.map((record: Json) => ({
    name: record.id,
    record,
    trajectory: o.batch.trajectories[record.id],
  })),
];
const steps = (o: SeedOutputs, type: string): Json[] =>
  records(o).flatMap(({ record }) => record.trajectory.filter((step: Json) => step.type === type));
const markdowns = (o: SeedOutputs) => [...Object.values(o.runs).map((r) => r.markdown), o.batch.markdown];
const wallMs = (trajectory: Json) => Math.round(trajectory.info.swerun_timing.wall_time_s * 1000);

function summaryField(key: string, type: string, meaning: string, check?: SeedCheck): SeedRow {
  const holds = (o: SeedOutputs) => {
    for (const { name, line } of summaries(o)) expect(hasType(line[key], type), `${name}: ${key}`).toBe(true);
  };
  return itemRow(`summary.${key}`, type, meaning, holds, check);
}

function fullField(key: string, type: string, meaning: string, check?: SeedCheck): SeedRow {
  const holds = (o: SeedOutputs) => {
    for (const { name, record } of records(o)) {
      const value = key.split(".").reduce((v: Json, k) => v?.[k], record);
      expect(hasType(value, type), `${name}: ${key} = ${JSON.stringify(value)}`).toBe(true);
    }
  };
  return itemRow(`full.${key}`, type, meaning, holds, check);
}

function stepField(
  type: string,
  key: string,
  valueType: string,
  meaning: string,
  check?: SeedCheck,
): SeedRow {
  const holds = (o: SeedOutputs) => {
    const found = steps(o, type);
    expect(found.length).toBeGreaterThan(0);
    for (const step of found)
      expect(hasType(step[key], valueType), `${JSON.stringify(step)}: ${key}`).toBe(true);
  };
  return itemRow(`step:${type}.${key}`, valueType, meaning, holds, check);
}

const NO_PLANS = "swerun's agent makes no plans";

/** Seed 001 (the ACP harness's summary and judge formats) item by item, checked against exports of real runs. */
export const EXPORT_TABLE: Array<SeedRow> = [
  summaryField("id", "string", "the instance id (a single run: its trajectory's name)", (o) => {
    expect(o.batch.summaries.map((line: Json) => line.id).sort()).toEqual(
      Object.keys(o.batch.trajectories).sort(),
    );
  }),
  summaryField("input", "string", "the task", (o) =>
    expect(o.runs.full?.summary.input).toBe("greeting.txt should say hello, world"),
  ),
  summaryField("output", "string", "the submission, else the last reply's text", (o) => {
    expect(o.runs.full?.summary.output).toBe("hello, world\n");
  }),
  summaryField("toolCalls", "string[]", "the tool calls' names in order (a command's program)", (o) => {
    expect(o.runs.full?.summary.toolCalls).toEqual(["cat", "bash", "sleep", "printf", "grep", "echo"]);
  }),
  summaryField("status", "string", "passed, failed, error or timeout (see the status items)"),
  summaryField("duration", "int", "the instance's wall time in ms, as the run measured it", (o) => {
    for (const { name, line, trajectory } of summaries(o))
      expect(line.duration, name).toBe(wallMs(trajectory));
  }),
  {
    item: "status:passed",
    type: "string",
    meaning: "completed without tool errors",
    check: (o) => expect(o.runs.limit?.summary.status).toBe("passed"),
  },
  {
    item: "status:failed",
    type: "string",
    meaning: "completed, but one or more tool calls failed (even when it submitted)",
    check: (o) => {
      expect(o.runs.full?.summary.status).toBe("failed");
      expect(o.runs.scripted?.summary.status).toBe("failed"); // its `node test.js` exits 1
    },
  },
  {
    item: "status:error",
    type: "string",
    meaning:
      "did not complete: an error ended it, repeated format errors did, it was interrupted, or it records no end",
    check: (o) => {
      for (const name of ["exhausted", "error", "interrupted", "repeated"])
        expect(o.runs[name]?.summary.status, name).toBe("error");
      expect(o.runs.repeated?.report.result.outcome).toBe("error"); // as the report says
    },
  },
  {
    item: "status:timeout",
    type: "string",
    meaning: "the run's time limit ran out (TimeExceeded), or an error said it timed out",
    check: (o) => expect(o.runs.timelimit?.summary.status).toBe("timeout"),
  },
  fullField("id", "string", "as summary.id"),
  fullField("input", "string", "as summary.input"),
  fullField("output", "string", "as summary.output"),
  {
    item: "full.expected",
    type: "string",
    meaning: "expected output",
    notProduced: "a SWE-bench task has no expected output (its tests are graded by `swerun eval`)",
  },
  fullField("trajectory", "array", "every step, with ids"),
  fullField(
    "metadata",
    "object",
    "instance_id, repo, agent, model, exit_status, cost, api_calls, steps, resolved, verdict",
    (o) => {
      for (const { record } of records(o)) expect(record.metadata.agent).toBe("swerun");
    },
  ),
  fullField("timing", "object", "start, end, firstResponse"),
  fullField("timing.start", "int", "Unix ms the instance started", (o) => {
    for (const { name, record, trajectory } of records(o))
      expect(record.timing.start, name).toBe(Math.round(trajectory.info.swerun_timing.started_at * 1000));
  }),
  fullField("timing.end", "int", "Unix ms it ended: start plus its wall time", (o) => {
    for (const { name, record, trajectory } of records(o))
      expect(record.timing.end - record.timing.start, name).toBe(wallMs(trajectory));
  }),
  {
    item: "full.timing.firstResponse",
    type: "int",
    meaning: "ms from the start to the first step; absent when there is no step",
    check: (o) => {
      for (const { name, record } of records(o)) {
        if (record.trajectory.length === 0) expect(record.timing.firstResponse, name).toBeUndefined();
        else expect(record.timing.firstResponse, name).toBe(record.trajectory[0].timestamp);
      }
    },
  },
  fullField("status", "string", "as summary.status", (o) => {
    for (const r of Object.values(o.runs)) expect(r.judge.status).toBe(r.summary.status);
  }),
  {
    item: "full.errors",
    type: "string[]",
    meaning: "what ended a run that failed with an error; absent otherwise",
    check: (o) => {
      expect(o.runs.exhausted?.judge.errors?.[0]).toMatch(/failed 2 times/);
      expect(o.runs.full?.judge.errors).toBeUndefined();
    },
  },
  {
    item: "step.stepId",
    type: "string",
    meaning: "`<id>-step-<n>`, n counting the steps from 1",
    check: (o) => {
      for (const { record } of records(o))
        expect(record.trajectory.map((step: Json) => step.stepId)).toEqual(
          record.trajectory.map((_: Json, index: number) => `${record.id}-step-${index + 1}`),
        );
    },
  },
  {
    item: "step:thought",
    type: "object",
    meaning: "the reply's reasoning",
    check: (o) => expect(steps(o, "thought").length).toBe(1),
  },
  stepField("thought", "content", "string", "the reasoning text", (o) => {
    expect(steps(o, "thought")[0]?.content).toBe("I read greeting.txt before changing it.");
  }),
  stepField("thought", "timestamp", "int", "ms from the start to the reply"),
  {
    item: "step:message",
    type: "object",
    meaning: "a reply's text",
    check: (o) => expect(steps(o, "message").length).toBeGreaterThan(0),
  },
  stepField(
    "message",
    "content",
    "string",
    "the text (for a reply that could not be run, then the feedback)",
    (o) => {
      // A format error is a message (the seed's kinds only), marked with swerun's added format_error.
      for (const { record } of records(o))
        for (const step of record.trajectory)
          expect(["thought", "message", "tool_call"]).toContain(step.type);
      const feedback = o.runs.repeated?.judge.trajectory.filter((s: Json) => s.format_error !== undefined);
      expect(feedback?.map((s: Json) => s.type)).toEqual(["message", "message", "message"]);
    },
  ),
  stepField("message", "timestamp", "int", "ms from the start to the reply"),
  {
    item: "step:tool_call",
    type: "object",
    meaning: "a command (or a tool call with invalid JSON arguments)",
    check: (o) =>
      expect(o.runs.full?.judge.trajectory.filter((s: Json) => s.type === "tool_call")).toHaveLength(6),
  },
  stepField("tool_call", "name", "string", "the command's program"),
  stepField("tool_call", "status", "string", "completed or failed", (o) => {
    for (const step of steps(o, "tool_call")) expect(["completed", "failed"]).toContain(step.status);
  }),
  stepField(
    "tool_call",
    "input",
    "object",
    "{command}, or {arguments} as sent when they were not valid JSON",
  ),
  stepField("tool_call", "output", "string", "the command's output"),
  stepField(
    "tool_call",
    "duration",
    "int or null",
    "ms it ran (the submitting command too); null when not recorded",
    (o) => {
      const calls = o.runs.full?.judge.trajectory.filter((s: Json) => s.type === "tool_call") ?? [];
      expect(Number.isInteger(calls.at(-1)?.duration)).toBe(true);
    },
  ),
  stepField(
    "tool_call",
    "timestamp",
    "int or null",
    "ms from the start to the command's start; null when not recorded",
    (o) => {
      const calls = o.runs.full?.judge.trajectory.filter((s: Json) => s.type === "tool_call") ?? [];
      expect(calls.every((s: Json) => Number.isInteger(s.timestamp))).toBe(true);
    },
  ),
  { item: "step:plan", type: "object", meaning: "a plan", notProduced: NO_PLANS },
  { item: "step:plan.entries", type: "array", meaning: "its entries", notProduced: NO_PLANS },
  { item: "step:plan.timestamp", type: "int", meaning: "when", notProduced: NO_PLANS },
  {
    item: "md:Input",
    type: "string",
    meaning: "`## Evaluation Record: <id>`, then `**Input:** <task>`",
    check: (o) =>
      expect(o.runs.full?.markdown).toMatch(
        /^## Evaluation Record: run\n\n\*\*Input:\*\* greeting.txt should say hello, world\n\n\*\*Trajectory:\*\*\n/,
      ),
  },
  {
    item: "md:Trajectory",
    type: "string",
    meaning: "the numbered steps",
    check: (o) => expect(o.runs.full?.markdown).toContain("**Trajectory:**\n1. "),
  },
  {
    item: "md:[THOUGHT]",
    type: "string",
    meaning: "`N. [THOUGHT] <first 100 chars> [->stepId]`",
    check: (o) =>
      expect(o.runs.full?.markdown).toContain(
        "1. [THOUGHT] I read greeting.txt before changing it. [->run-step-1]\n",
      ),
  },
  {
    item: "md:[TOOL]",
    type: "string",
    meaning: "`N. [TOOL:<name>] -> <status> (<ms>ms) [->stepId]`, then the command as a code preview",
    check: (o) =>
      expect(o.runs.full?.markdown).toMatch(
        /\n3\. \[TOOL:cat\] -> completed \(\d+ms\) \[->run-step-3\]\n {3}```bash\n {3}cat greeting.txt\n {3}```\n/,
      ),
  },
  { item: "md:[PLAN]", type: "string", meaning: "a plan step", notProduced: NO_PLANS },
  {
    item: "md:[MESSAGE]",
    type: "string",
    meaning: "`N. [MESSAGE] <first 100 chars> [->stepId]`",
    check: (o) =>
      expect(o.runs.full?.markdown).toContain("2. [MESSAGE] Let me read the file. [->run-step-2]\n"),
  },
  {
    item: "md:[->stepId]",
    type: "string",
    meaning: "each step line ends with its id",
    check: (o) => expect(o.batch.markdown).toMatch(/\[->swerun-demo__\w+-\d+-step-1\]/),
  },
  {
    item: "md:Output",
    type: "string",
    meaning: "`**Output:** <first 200 chars>`",
    check: (o) => expect(o.runs.full?.markdown).toContain("\n**Output:** hello, world\n\n**Metadata:** "),
  },
  {
    item: "md:Metadata",
    type: "string",
    meaning: "`**Metadata:** key=value, ...`",
    check: (o) =>
      expect(o.runs.full?.markdown).toMatch(
        /\n\*\*Metadata:\*\* instance_id=null, repo=null, agent=swerun, model=openai\/test-model, /,
      ),
  },
  {
    item: "md:Metadata.agent",
    type: "string",
    meaning: "agent=swerun",
    check: (o) => {
      for (const md of markdowns(o)) expect(md).toContain(", agent=swerun, ");
    },
  },
  {
    item: "md:Status",
    type: "string",
    meaning: "`**Status:** <status>`",
    check: (o) => expect(o.runs.full?.markdown).toContain("\n**Status:** failed\n"),
  },
  {
    item: "md:Duration",
    type: "string",
    meaning: "`**Duration:** <ms>ms`, the wall time",
    check: (o) => {
      for (const r of Object.values(o.runs))
        expect(r.markdown).toContain(`\n**Duration:** ${wallMs(r.trajectory)}ms\n\n---\n`);
    },
  },
  {
    item: "rule:stepId",
    type: "string",
    meaning: "step ids `<prompt-id>-step-<N>`",
    check: (o) => expect(o.runs.full?.judge.trajectory[0].stepId).toBe("run-step-1"),
  },
  {
    item: "rule:preview100",
    type: "string",
    meaning: "thought and message previews: the first 100 characters, then ...",
    check: (o) => {
      for (const md of markdowns(o))
        for (const match of md.matchAll(/\[(?:THOUGHT|MESSAGE)\] (.*?)( \[->)/gs))
          expect((match[1] ?? "").replace(/\.\.\.$/, "").length).toBeLessThanOrEqual(100);
    },
  },
  {
    item: "rule:output200",
    type: "string",
    meaning: "the output preview: the first 200 characters, then ...",
    check: (o) => {
      const md = o.runs.scripted?.markdown ?? "";
      const output = md.slice(md.indexOf("**Output:** ") + 12, md.indexOf("\n**Metadata:**"));
      expect(output.length).toBe(203);
      expect(output.endsWith("...")).toBe(true);
    },
  },
  {
    item: "rule:code8+4",
    type: "string",
    meaning: "a code preview of more than 12 lines shows the first 8 and the last 4",
    check: (o) => {
      const md = o.runs.full?.markdown ?? "";
      expect(md).toContain("```bash\n    grep -q missing greeting.txt\n");
      expect(md).toContain("    # checked\n\n    // ... 2 lines omitted ...\n\n    # checked\n");
      expect(md).toContain("    test -z done\n    ```\n");
    },
  },
];
