import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { runCli } from "../helpers/cli.js";
import { describeDocker } from "../helpers/docker.js";
import { tempDir } from "../helpers/tmp.js";

// biome-ignore lint/suspicious/noExplicitAny: outputs are read as JSON
type Json = Record<string, any>;

/**
 * Seed 004 (sniffbench's run tracking, copied into test/fixtures/seeds/): every item it documents, extracted
 * from its text: the keys of its JSON examples (`store.*`, `run.*`, `agent.*`, `case.*`, `metrics.*`), the
 * rows of its field and metric tables, the columns of `runs list`, the labels of `runs show` (`show:*`,
 * `show-cases:*`), the ref formats (`ref:*`) and the commands (`command:*`).
 */
function documentedItems(): Set<string> {
  const text = readFileSync(
    join(packageRoot(), "test", "fixtures", "seeds", "004-sniffbench-runs.md"),
    "utf8",
  );
  const items = new Set<string>();
  const lines = text.split("\n");
  let heading = "";
  const keysOf = (value: unknown, prefix: (path: string[]) => string | undefined, path: string[] = []) => {
    if (!value || typeof value !== "object" || Array.isArray(value)) return;
    for (const [key, inner] of Object.entries(value)) {
      const name = prefix([...path, key]);
      if (name) items.add(name);
      keysOf(inner, prefix, [...path, key]);
    }
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? "";
    if (/^#{1,4} /.test(line)) heading = line.replace(/^#+ /, "");
    if (line.startsWith("```") && line !== "```") {
      const language = line.slice(3);
      const body: string[] = [];
      for (index++; index < lines.length && lines[index] !== "```"; index++) body.push(lines[index] ?? "");
      if (language === "json") {
        let source = body.join("\n").replace(/\{ \.\.\. \}/g, "{}");
        if (source.trim().startsWith('"')) source = `{${source}}`;
        const data = JSON.parse(source);
        keysOf(data, (path) => {
          const [first, runId, second, caseId, third] = path;
          if (first === "runs" && path.length === 2) return undefined;
          if (first === "runs" && second === "agent" && path.length === 4) return `agent.${caseId}`;
          if (first === "runs" && second === "cases" && path.length === 5) return `case.${third}`;
          if (first === "runs" && path.length === 3) return `run.${second}`;
          if (first === "runs" || runId === undefined) {
            if (path.length !== 1) return undefined;
            if (heading === "Storage") return `store.${first}`;
            if (first === "behaviorMetrics") return "case.behaviorMetrics";
            return `agent.${first}`;
          }
          if (path[0] === "behaviorMetrics" && path.length === 2) return `metrics.${runId}`;
          if (path[0] === "mcpServers" && path.length === 3) return `agent.mcpServers.${second}`;
          return undefined;
        });
      } else if (language === "bash") {
        for (const command of body) {
          const match = /^sniff (runs \w+|compare)(.*)$/.exec(command.trim());
          if (!match) continue;
          items.add(`command:${match[1]}`);
          for (const flag of (match[2] ?? "").match(/--\w+/g) ?? []) items.add(`command:${match[1]} ${flag}`);
        }
      } else if (language === "" && heading === "List Runs") {
        const header = body.find((row) => row.includes(" ID ") && row.includes("Label"));
        for (const column of (header ?? "")
          .replace(/│/g, "")
          .trim()
          .split(/\s{2,}/))
          items.add(`list:${column}`);
      } else if (language === "" && heading === "Show Run Details") {
        for (const row of body) {
          const label = /^│ ([A-Z][\w. ]*?):/.exec(row)?.[1];
          if (label) items.add(`show:${label}`);
          if (/^\s+Case ID\s/.test(row))
            for (const column of row.trim().split(/\s{2,}/)) items.add(`show-cases:${column}`);
        }
      }
    }
    const row = /^\| `(\w+)` \| /.exec(line)?.[1];
    if (row && heading === "Basic Fields") items.add(`agent.${row}`);
    if (row && (heading === "Metrics Explained" || heading === "Behavior Metrics"))
      items.add(`metrics.${row}`);
    const ref = /^\| (Full ID|Label|Partial ID) \| /.exec(line)?.[1];
    if (ref && heading === "ID Resolution") items.add(`ref:${ref}`);
  }
  return items;
}

interface Outputs {
  dir: string;
  run: Json;
  list: Json[];
  listText: string;
  show: Json;
  showText: string;
  compareText: string;
  byLabel: Json;
  byPrefix: Json;
}

interface Row {
  item: string;
  /** How swerun produces it, checked against the outputs of a real run. */
  check?: (outputs: Outputs) => void;
  /** Why swerun does not produce it (also in the README). */
  notProduced?: string;
}

const ID = "swerun-demo__calc-1";
const METRIC_KEYS = [
  "totalTokens",
  "inputTokens",
  "cacheReadTokens",
  "cacheWriteTokens",
  "toolCount",
  "readCount",
  "costUsd",
  "explorationRatio",
  "cacheHitRatio",
  "avgToolDurationMs",
  "tokensPerTool",
  "tokensPerRead",
];
const NO_CLAUDE =
  "swerun is not Claude Code: no CLAUDE.md, MCP servers, tool allowlists, permission modes or thinking";

const TABLE: Row[] = [
  {
    item: "store.version",
    notProduced: "swerun has no shared runs.json: each run folder's run.json is its record",
  },
  { item: "store.repoPath", notProduced: "no shared store (a run's folder is `dir` in runs --json)" },
  { item: "store.createdAt", notProduced: "no shared store" },
  { item: "store.runs", notProduced: "no shared store: runs list --json lists the runs" },
  {
    item: "run.id",
    check: (o) => {
      expect(o.run.id).toBe(o.run.run_id);
      expect(o.show.id).toBe(o.run.id);
    },
  },
  { item: "run.label", check: (o) => expect([o.run.label, o.show.label]).toEqual(["baseline", "baseline"]) },
  {
    item: "run.createdAt",
    check: (o) => {
      expect(o.run.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(o.show.createdAt).toBe(o.run.createdAt);
      expect((o.list[0] as Json).createdAt).toBe(o.run.createdAt);
    },
  },
  { item: "run.agent", check: (o) => expect(o.show.agent).toEqual(o.run.agent) },
  { item: "run.cases", check: (o) => expect(Object.keys(o.show.cases)).toEqual(Object.keys(o.run.cases)) },
  { item: "agent.name", check: (o) => expect(o.run.agent.name).toBe("swerun") },
  { item: "agent.version", check: (o) => expect(o.run.agent.version).toMatch(/^\d+\.\d+\.\d+/) },
  { item: "agent.model", check: (o) => expect(o.run.agent.model).toBe("deterministic/demo") },
  {
    item: "agent.claudeMdHash",
    check: (o) => expect(o.run.agent.template_sha256.system_template).toMatch(/^[0-9a-f]{64}$/),
  },
  { item: "agent.mcpServers", notProduced: NO_CLAUDE },
  { item: "agent.mcpServers.type", notProduced: NO_CLAUDE },
  { item: "agent.mcpServers.enabled", notProduced: NO_CLAUDE },
  { item: "agent.allowedTools", notProduced: NO_CLAUDE },
  { item: "agent.disallowedTools", notProduced: NO_CLAUDE },
  { item: "agent.permissionMode", notProduced: NO_CLAUDE },
  { item: "agent.thinkingEnabled", notProduced: NO_CLAUDE },
  {
    item: "agent.variantId",
    notProduced: "swerun has no variants (labels and the config snapshot stand in)",
  },
  { item: "case.answer", check: (o) => expect(o.run.cases[ID].answer).toMatch(/^diff --git a\/calc\.sh/) },
  { item: "case.grade", check: (o) => expect(o.run.cases[ID].grade).toBe(10) },
  {
    item: "case.gradedAt",
    check: (o) =>
      expect(Date.parse(o.run.cases[ID].gradedAt)).toBeGreaterThanOrEqual(Date.parse(o.run.createdAt)),
  },
  { item: "case.gradedBy", check: (o) => expect(o.run.cases[ID].gradedBy).toBe("swebench") },
  {
    item: "case.behaviorMetrics",
    check: (o) => {
      expect(Object.keys(o.run.cases[ID].behaviorMetrics)).toEqual(expect.arrayContaining(METRIC_KEYS));
      expect(o.show.cases[ID].behaviorMetrics).toEqual(o.run.cases[ID].behaviorMetrics);
    },
  },
  ...METRIC_KEYS.map(
    (key): Row => ({
      item: `metrics.${key}`,
      check: (o) => expect(typeof o.run.cases[ID].behaviorMetrics[key]).toBe("number"),
    }),
  ),
  {
    item: "list:ID",
    check: (o) => expect(o.listText).toMatch(/^│ ID +Label +Date +Agent +Cases +Grade /m),
  },
  { item: "list:Label", check: (o) => expect(o.listText).toMatch(/^│ \S+ +baseline +/m) },
  { item: "list:Date", check: (o) => expect(o.listText).toMatch(/ [A-Z][a-z]{2} \d{1,2}, \d{4} +swerun /) },
  { item: "list:Agent", check: (o) => expect(o.listText).toMatch(/ swerun +3\/3 +10\.0\/10 /) },
  {
    item: "list:Cases",
    check: (o) => expect(o.list[0] as Json).toMatchObject({ cases_graded: 3, cases_finished: 3 }),
  },
  { item: "list:Grade", check: (o) => expect((o.list[0] as Json).average_grade).toBe(10) },
  { item: "show:ID", check: (o) => expect(o.showText).toContain(`│ ID: ${o.run.id}`) },
  { item: "show:Label", check: (o) => expect(o.showText).toMatch(/^│ Label: baseline +│$/m) },
  {
    item: "show:Created",
    check: (o) => expect(o.showText).toMatch(/^│ Created: \w{3} \d{1,2}, \d{4}, \d\d:\d\d [AP]M +│$/m),
  },
  { item: "show:Agent", check: (o) => expect(o.showText).toMatch(/^│ Agent: swerun +│$/m) },
  { item: "show:Version", check: (o) => expect(o.showText).toContain(`│ Version: ${o.run.agent.version}`) },
  { item: "show:Model", check: (o) => expect(o.showText).toMatch(/^│ Model: deterministic\/demo +│$/m) },
  {
    item: "show:CLAUDE.md",
    check: (o) => expect(o.showText).toMatch(/^│ system_template: [0-9a-f]{8}\.\.\. +│$/m),
  },
  { item: "show:MCP Servers", notProduced: NO_CLAUDE },
  { item: "show:Thinking", notProduced: NO_CLAUDE },
  { item: "show:Variant", notProduced: "swerun has no variants" },
  { item: "show:Cases", check: (o) => expect(o.showText).toMatch(/^│ Cases: 3\/3 graded +│$/m) },
  {
    item: "show:Average Grade",
    check: (o) => expect(o.showText).toMatch(/^│ Average Grade: 10\.0\/10 +│$/m),
  },
  {
    item: "show-cases:Case ID",
    check: (o) => expect(o.showText).toMatch(/^ {2}Case ID +Grade +Graded By +Notes /m),
  },
  {
    item: "show-cases:Grade",
    check: (o) => expect(o.showText).toMatch(new RegExp(`^ {2}${ID} +10/10 `, "m")),
  },
  { item: "show-cases:Graded By", check: (o) => expect(o.showText).toMatch(/ 10\/10 +swebench +resolved /) },
  { item: "show-cases:Notes", check: (o) => expect(o.showText).toMatch(/ swebench +resolved +Submitted /) },
  { item: "ref:Full ID", check: (o) => expect(o.show.id).toBe(o.run.id) },
  { item: "ref:Label", check: (o) => expect(o.byLabel.id).toBe(o.run.id) },
  { item: "ref:Partial ID", check: (o) => expect(o.byPrefix.id).toBe(o.run.id) },
  { item: "command:runs list", check: (o) => expect(o.listText).toMatch(/^╭─ Runs ─+╮$/m) },
  { item: "command:runs list --json", check: (o) => expect((o.list[0] as Json).id).toBe(o.run.id) },
  { item: "command:runs show", check: (o) => expect(o.showText).toMatch(/^╭─ Run: \S+ ─+╮$/m) },
  { item: "command:runs show --json", check: (o) => expect(o.show.cases[ID].grade).toBe(10) },
  {
    item: "command:compare",
    check: (o) => {
      expect(o.compareText).toMatch(/^│ Run Comparison +│$/m);
      expect(o.compareText).toContain("No configuration changes detected.");
      expect(o.compareText).toMatch(new RegExp(`^ {2}${ID} +10/10 +10/10 `, "m"));
    },
  },
  { item: "command:runs delete", check: () => {} }, // checked by the last test
  { item: "command:runs delete --force", check: () => {} },
];

await describeDocker("seed 004: sniffbench's run tracking (run.json, swerun runs)", () => {
  let outputs: Outputs;
  beforeAll(async () => {
    const root = tempDir();
    const dir = join(root, "demo");
    const batch = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--eval",
      "--label",
      "baseline",
      "-q",
      "-o",
      dir,
    ]);
    expect(batch.code).toBe(0);
    const runs = async (...args: string[]) => {
      const result = await runCli(["runs", ...args, "--dir", root]);
      expect(result.code).toBe(0);
      return result.stdout;
    };
    const run = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
    outputs = {
      dir,
      run,
      list: JSON.parse(await runs("list", "--json")),
      listText: await runs("list"),
      show: JSON.parse(await runs("show", run.id, "--json")),
      showText: await runs("show", run.id),
      compareText: await runs("compare", "baseline", run.id),
      byLabel: JSON.parse(await runs("show", "baseline", "--json")),
      byPrefix: JSON.parse(await runs("show", run.id.slice(0, 12), "--json")),
    };
  }, 120_000);

  it("has a row for every item the seed documents, and none twice", () => {
    const rows = TABLE.map((row) => row.item);
    expect([...documentedItems()].filter((item) => !rows.includes(item))).toEqual([]);
    expect(rows.filter((item, index) => rows.indexOf(item) !== index)).toEqual([]);
    for (const row of TABLE) expect(Boolean(row.check) !== Boolean(row.notProduced), row.item).toBe(true);
  });

  describe("each item", () => {
    for (const row of TABLE.filter((entry) => entry.check)) it(row.item, () => row.check?.(outputs));
  });

  it("deletes a run by label with --force", async () => {
    const root = tempDir();
    const made = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--environment-class",
      "local",
      "--label",
      "gone",
      "-q",
      "-o",
      join(root, "d"),
    ]);
    expect(made.code).toBe(0);
    const result = await runCli(["runs", "delete", "gone", "--force", "--dir", root]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse((await runCli(["runs", "list", "--json", "--dir", root])).stdout)).toEqual([]);
  });
});
