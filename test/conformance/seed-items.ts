import { readFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/util/package-root.js";

/**
 * The documented items of the seed documents (copied into test/fixtures/seeds/), extracted from their text:
 * every field of a table, a type block or an example payload, every event type, status value and markdown
 * marker. The conformance tests check that their own tables name each of these, so an item the seed
 * documents cannot be left out unnoticed.
 */
const SEEDS = join(packageRoot(), "test", "fixtures", "seeds");
const read = (name: string) => readFileSync(join(SEEDS, name), "utf8");

/** Fenced blocks of a language, with the heading they are under. */
function blocks(text: string, language: string): Array<{ heading: string; body: string }> {
  const found: Array<{ heading: string; body: string }> = [];
  let heading = "";
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? "";
    if (/^#{1,4} /.test(line)) heading = line.replace(/^#+ /, "");
    if (line.trim() === `\`\`\`${language}`) {
      const body: string[] = [];
      // Only an unindented fence closes the block (the judge layout nests an indented code block).
      for (index++; index < lines.length && lines[index] !== "```"; index++) body.push(lines[index] ?? "");
      found.push({ heading, body: body.join("\n") });
    }
  }
  return found;
}

/** Keys of a JSON object (and of the objects of its arrays), dotted below `prefix`. */
function _jsonKeys(value: unknown, prefix: string, out: Set<string>): void {
  if (Array.isArray(value)) for (const item of value) _jsonKeys(item, prefix, out);
  else if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      out.add(`${prefix}${key}`);
      if (inner && typeof inner === "object" && !Array.isArray(inner))
        _jsonKeys(inner, `${prefix}${key}.`, out);
    }
  }
}

/** Seed 000 (swival's report): `field`, `settings.field`, ..., `timeline:<type>` and `timeline:<type>.<key>`, `outcome:<value>`. */
export function swivalItems(): Set<string> {
  const text = read("000-swival-report.md");
  const items = new Set<string>();
  const sections: Record<string, string> = {
    "Top-level fields": "",
    settings: "settings.",
    result: "result.",
    stats: "stats.",
  };
  let prefix: string | undefined;
  for (const line of text.split("\n")) {
    const heading = /^### (.+)$/.exec(line);
    if (heading) prefix = sections[heading[1] ?? ""];
    const row = /^\| `(\w+)`\s+\|/.exec(line);
    if (row && prefix !== undefined) items.add(`${prefix}${row[1]}`);
    const outcome = /^- \*\*(\w+)\*\* --/.exec(line);
    if (outcome) items.add(`outcome:${outcome[1]}`);
    const type = /^\*\*`(\w+)`\*\* --/.exec(line);
    if (type) items.add(`timeline:${type[1]}`);
  }
  for (const block of blocks(text, "json")) {
    const body = block.body.replace(/\n\s*/g, " ");
    const data = JSON.parse(body) as { timeline?: Array<Record<string, unknown>> } & Record<string, unknown>;
    const entries = Array.isArray(data.timeline) ? data.timeline : [data];
    for (const entry of entries) {
      for (const key of Object.keys(entry))
        if (key !== "turn" && key !== "type") items.add(`timeline:${entry.type}.${key}`);
    }
  }
  return items;
}

/**
 * Seed 001 (the harness's formats): `summary.<field>`, `full.<field>`, `full.timing.<field>`, `step:<type>` and
 * `step:<type>.<field>`, `status:<value>`, `md:<marker>`.
 */
export function harnessItems(): Set<string> {
  const text = read("001-acp-harness-formats.md");
  const items = new Set<string>();
  for (const block of blocks(text, "typescript")) {
    let owner = "";
    let nested = "";
    for (const line of block.body.split("\n")) {
      const type = /^type (\w+) =/.exec(line);
      if (type)
        owner = type[1] === "SummaryResult" ? "summary" : type[1] === "FullResult" ? "full" : (type[1] ?? "");
      const variant = /\{ type: '(\w+)'(.*)\}/.exec(line);
      if (variant) {
        items.add(`step:${variant[1]}`);
        for (const field of (variant[2] ?? "").matchAll(/(\w+)\??: /g))
          items.add(`step:${variant[1]}.${field[1]}`);
        continue;
      }
      const open = /type: '(\w+)'$/.exec(line.trim());
      if (open) {
        nested = `step:${open[1]}`;
        items.add(nested);
        continue;
      }
      const field = /^\s+(\w+)\??: /.exec(line);
      if (!field) continue;
      if (nested) items.add(`${nested}.${field[1]}`);
      else if (owner === "summary" || owner === "full") {
        const indent = /^\s*/.exec(line)?.[0].length ?? 0;
        items.add(indent > 2 && owner === "full" ? `full.timing.${field[1]}` : `${owner}.${field[1]}`);
      }
      if (/^\s*\}/.test(line)) nested = "";
    }
  }
  if (/type IndexedStep = TrajectoryStep & \{ stepId: string \}/.test(text)) items.add("step.stepId");
  if (text.includes("**Step ID Format:** `<prompt-id>-step-<N>`")) items.add("rule:stepId");
  if (text.includes("Thought/message content: First 100 characters")) items.add("rule:preview100");
  if (text.includes("Output: First 200 characters")) items.add("rule:output200");
  if (text.includes("Head (8 lines) + tail (4 lines) for files > 12 lines")) items.add("rule:code8+4");
  const statuses = text.slice(text.indexOf("## Status Values"), text.indexOf("## Input Format"));
  for (const status of statuses.matchAll(/^\| `(\w+)` \|/gm)) items.add(`status:${status[1]}`);
  const structure = blocks(text, "markdown").find((block) => block.body.includes("## Evaluation Record"));
  for (const marker of structure?.body.matchAll(/\*\*(\w+):\*\*/g) ?? []) items.add(`md:${marker[1]}`);
  for (const marker of structure?.body.matchAll(/\[([A-Z]+)[\]:]/g) ?? []) items.add(`md:[${marker[1]}]`);
  if (structure?.body.includes("[->stepId]")) items.add("md:[->stepId]");
  if (structure?.body.includes("agent=")) items.add("md:Metadata.agent");
  return items;
}

/**
 * Seed 002 (SwarmSDK's events): `common.<field>`, `event:<type>`, `<type>.<field>` for every root field its
 * "Field Locations" or example names, `usage.<key>` (agent_step/agent_stop usage), `<type>.metadata.<key>`.
 */
export function swarmItems(): Set<string> {
  const text = read("002-swarmsdk-events.md");
  const items = new Set<string>();
  const common = text.slice(text.indexOf("## Common Fields"), text.indexOf("**Hierarchical"));
  for (const field of common.matchAll(/^- `(\w+)`/gm)) items.add(`common.${field[1]}`);
  const always = text.slice(text.indexOf("### Always at Root Level"), text.indexOf("### Event-Specific"));
  for (const field of always.matchAll(/^- `(\w+)`/gm)) items.add(`common.${field[1]}`);
  for (const block of blocks(text, "ruby")) {
    const heading = /^\d+a?\. (\w+)$/.exec(block.heading);
    if (!heading) continue;
    const type = heading[1] as string;
    items.add(`event:${type}`);
    let nest: string | undefined;
    for (const line of block.body.split("\n")) {
      const top = /^ {2}(\w+):/.exec(line);
      if (top) {
        if (!["timestamp", "swarm_id", "parent_swarm_id", "agent", "type"].includes(top[1] ?? ""))
          items.add(`${type}.${top[1]}`);
        nest =
          /\{\s*(#.*)?$/.test(line) && (top[1] === "usage" || top[1] === "metadata") ? top[1] : undefined;
        continue;
      }
      const inner = /^ {4}(\w+):/.exec(line);
      if (inner && nest === "usage" && (type === "agent_stop" || type === "agent_step"))
        items.add(`usage.${inner[1]}`);
      else if (inner && nest === "metadata") items.add(`${type}.metadata.${inner[1]}`);
      else if (inner && nest === "usage") items.add(`${type}.usage.${inner[1]}`);
    }
  }
  return items;
}
