import { stripVTControlCharacters } from "node:util";
import pc from "picocolors";
import { count, seconds, usd } from "../facts/figures.js";
import { printableLine } from "../util/printable.js";
import type { RunComparison } from "./compare.js";
import type { StoredRun } from "./store.js";

type Colors = Pick<typeof pc, "green" | "red" | "bold" | "dim" | "cyan">;
const plain: Colors = { green: String, red: String, bold: String, dim: String, cyan: String } as Colors;
export const colorsFor = (tty: boolean): Colors => (tty ? pc : plain);

const visible = (cell: string) => stripVTControlCharacters(cell);

/** Columns padded to their widest cell. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, visible(cell).length);
    });
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - visible(cell).length),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** sniffbench's box: a rounded frame, its title in the top edge, each line padded to the widest. */
export function box(content: string, title: string, colors: Colors): string {
  const lines = content.split("\n");
  const widest = Math.max(...lines.map((line) => visible(line).length));
  const width = Math.max(widest + 2, title.length + 4);
  // Every line is width + 4 columns: the corners (or bars), a space each side and the padded content.
  const top = `${colors.dim("╭─")}${colors.bold(` ${title} `)}${colors.dim(`${"─".repeat(width - title.length - 1)}╮`)}`;
  const middle = lines.map(
    (line) => `${colors.dim("│")} ${line}${" ".repeat(width - visible(line).length)} ${colors.dim("│")}`,
  );
  const bottom = colors.dim(`╰${"─".repeat(width + 2)}╯`);
  return `\n${top}\n${middle.join("\n")}\n${bottom}\n`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const two = (value: number) => String(value).padStart(2, "0");

/** sniffbench's dates, in local time: `Dec 11, 2025`, with `time` `Dec 11, 2025, 07:34 PM`; "-" when unknown. */
export function seedDate(iso: string, time = false): string {
  if (!iso) return "-";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "Invalid date";
  const day = `${MONTHS[date.getMonth()]} ${date.getDate()}, ${date.getFullYear()}`;
  if (!time) return day;
  const hours = date.getHours();
  return `${day}, ${two(hours % 12 || 12)}:${two(date.getMinutes())} ${hours < 12 ? "AM" : "PM"}`;
}

const money = usd;

/** What a run's cases add up to: sniffbench's graded count and average grade, and swerun's counts. */
function counts(run: StoredRun) {
  const cases = Object.values(run.cases);
  const graded = cases.filter((c) => typeof c.grade === "number");
  const withVerdict = cases.filter((c) => typeof c.resolved === "boolean");
  return {
    cases: cases.length,
    graded: graded.length,
    averageGrade:
      graded.length > 0 ? graded.reduce((sum, c) => sum + (c.grade ?? 0), 0) / graded.length : null,
    submitted: cases.filter((c) => c.submitted).length,
    emptyPatches: cases.filter((c) => c.empty_patch).length,
    resolved: withVerdict.length > 0 ? withVerdict.filter((c) => c.resolved).length : null,
  };
}

const gradeText = (average: number | null) => (average === null ? "N/A" : `${average.toFixed(1)}/10`);

/** `swerun runs list --json`: sniffbench's runs (`id`, `label`, `createdAt`, `agent`, `cases`) plus swerun's counts. */
export function listJson(runs: StoredRun[]) {
  return runs.map((run) => {
    const n = counts(run);
    return {
      id: run.id,
      label: run.label,
      createdAt: run.created,
      agent: run.agent ?? { name: "swerun", version: null, model: run.model },
      cases: run.cases,
      model: run.model,
      cases_graded: n.graded,
      average_grade: n.averageGrade,
      cases_finished: n.cases,
      cases_total: run.total,
      submitted: n.submitted,
      empty_patches: n.emptyPatches,
      resolved: n.resolved,
      cost: run.totals.costUsd,
      state: run.state,
      imported: run.imported,
      ...(run.unreadable ? { unreadable: run.unreadable } : {}),
      dir: run.dir,
    };
  });
}

/**
 * `swerun runs list`, laid out as `sniff runs list`: a box titled Runs, the run count, then ID, Label, Date,
 * Agent, Cases (graded/finished) and Grade, followed by swerun's Model, Finished, Submitted, Resolved,
 * Cost and State.
 */
export function listText(runs: StoredRun[], colors: Colors = plain): string {
  if (runs.length === 0) return box(colors.dim("No runs found."), "Runs", colors);
  const rows = [
    [
      "ID",
      "Label",
      "Date",
      "Agent",
      "Cases",
      "Grade",
      "Model",
      "Finished",
      "Submitted",
      "Resolved",
      "Cost",
      "State",
    ],
  ];
  for (const run of runs) {
    const n = counts(run);
    rows.push([
      printableLine(run.id),
      printableLine(run.label ?? "(none)"),
      seedDate(run.created),
      (run.agent?.name ?? "swerun").slice(0, 10),
      `${n.graded}/${n.cases}`,
      gradeText(n.averageGrade),
      printableLine(run.model || "-"),
      `${n.cases}/${run.total}`,
      String(n.submitted),
      n.resolved === null ? "-" : String(n.resolved),
      money(run.totals.costUsd),
      run.state + (run.unreadable ? " (run.json unreadable)" : run.imported ? " (imported)" : ""),
    ]);
  }
  const [header = "", ...body] = table(rows).split("\n");
  const width = Math.max(...[header, ...body].map((line) => line.length));
  return box(
    [
      colors.bold(`${runs.length} run${runs.length === 1 ? "" : "s"}`),
      "",
      colors.dim(header),
      colors.dim("─".repeat(width)),
      ...body,
    ].join("\n"),
    "Runs",
    colors,
  );
}

/** `swerun runs show --json`: sniffbench's run (`id`, `label`, `createdAt`, `agent`, `cases`) plus swerun's. */
export function showJson(run: StoredRun) {
  const n = counts(run);
  return {
    id: run.id,
    label: run.label,
    createdAt: run.created,
    agent: run.agent,
    cases: run.cases,
    dir: run.dir,
    ended: run.ended,
    state: run.state,
    imported: run.imported,
    model: run.model,
    dataset: run.dataset,
    summary: {
      cases_graded: n.graded,
      average_grade: n.averageGrade,
      cases_finished: n.cases,
      cases_total: run.total,
      submitted: n.submitted,
      empty_patches: n.emptyPatches,
      resolved: n.resolved,
    },
    totals: run.totals,
  };
}

/** The agent configuration a run recorded (`runs show`), or its model and `(not recorded)`. */
function agentLines(run: StoredRun): string[] {
  const a = run.agent;
  if (!a) return [`Model: ${printableLine(run.model || "-")}`, "(not recorded)"];
  return [
    `Agent: ${a.name}`,
    `Version: ${a.version}`,
    `Model: ${a.model}`,
    `Model class: ${a.model_class}`,
    ...Object.entries(a.template_sha256).map(([key, hash]) => `${key}: ${hash.slice(0, 8)}...`),
    `Config: ${a.config_sha256.slice(0, 8)}...`,
    `Limits: ${a.step_limit ? `${a.step_limit} steps` : "no step limit"}, ${a.cost_limit ? `$${a.cost_limit}` : "no cost limit"}, ${a.wall_time_limit_seconds ? `${a.wall_time_limit_seconds} s` : "no time limit"}`,
    `Environment: ${a.environment_class}${a.exec_mode ? ` (${a.exec_mode})` : ""}${a.image_template ? `, image ${a.image_template}` : ""}`,
  ];
}

/** The dataset line of `runs show` (none when the run recorded no dataset). */
function datasetLines(run: StoredRun): string[] {
  const d = run.dataset;
  if (!d) return [];
  const parts = [`${d.subset}/${d.split}`];
  if (d.slice) parts.push(`slice ${d.slice}`);
  if (d.filter) parts.push(`filter ${d.filter}`);
  if (d.instance_ids) parts.push(`ids ${d.instance_ids}`);
  if (d.shard) parts.push(`shard ${d.shard}`);
  return [`Dataset: ${parts.join(", ")}`];
}

/** The inside of the `runs show` box: details, agent configuration, dataset, summary. */
function runDetailLines(run: StoredRun, colors: Colors): string[] {
  const n = counts(run);
  const t = run.totals;
  return [
    colors.bold("Run Details"),
    "",
    `ID: ${printableLine(run.id)}${run.unreadable ? ` (run.json could not be read: ${printableLine(run.unreadable)})` : run.imported ? " (imported)" : ""}`,
    ...(run.label ? [`Label: ${colors.cyan(printableLine(run.label))}`] : []),
    `Created: ${seedDate(run.created, true)}`,
    `Folder: ${run.dir}`,
    `State: ${run.state}`,
    "",
    colors.bold("Agent Configuration:"),
    ...agentLines(run),
    ...datasetLines(run),
    "",
    colors.bold("Summary:"),
    `Cases: ${n.graded}/${n.cases} graded`,
    `Average Grade: ${gradeText(n.averageGrade)}`,
    `Finished: ${n.cases}/${run.total}, ${n.submitted} submitted (${n.emptyPatches} empty patches)${n.resolved === null ? "" : `, ${n.resolved} resolved`}`,
    `Cost: ${money(t.costUsd)}   Tokens: ${count(t.totalTokens)} (cache read ${count(t.cacheReadTokens)})   Steps: ${t.steps}`,
    `Commands: ${t.toolCount} (reads ${t.readCount}, exploration ${t.explorationRatio}, avg ${t.avgToolDurationMs} ms)   Format errors: ${t.formatErrors}   Timeouts: ${t.timeouts}`,
    `Wall time (sum): ${seconds(t.wallTimeSeconds)}`,
  ];
}

/** The case results table of `runs show` (none without cases): sniffbench's columns, then swerun's. */
function caseResultLines(run: StoredRun, colors: Colors): string[] {
  const cases = Object.entries(run.cases).sort(([a], [b]) => (a < b ? -1 : 1));
  if (cases.length === 0) return [];
  const rows = [
    ["Case ID", "Grade", "Graded By", "Notes", "Exit status", "Steps", "Tokens", "Cost", "Wall time"],
  ];
  for (const [id, c] of cases) {
    rows.push([
      id,
      typeof c.grade === "number" ? `${c.grade}/10` : "N/A",
      c.gradedBy ?? "-",
      c.verdict ?? "-",
      c.exit_status,
      String(c.steps),
      count(c.behaviorMetrics.totalTokens),
      money(c.cost),
      seconds(c.duration_s),
    ]);
  }
  const [header = "", ...body] = table(rows).split("\n");
  return [
    colors.bold("  Case Results:"),
    "",
    colors.dim(`  ${header}`),
    colors.dim(`  ${"─".repeat(Math.max(...[header, ...body].map((line) => line.length)))}`),
    ...body.map((line) => `  ${line}`),
    "",
  ];
}

/**
 * `swerun runs show`, laid out as `sniff runs show`: a box titled `Run: <id>` with the run's details, its
 * agent configuration and summary, then the case results (Case ID, Grade, Graded By, Notes: the verdict)
 * followed by swerun's columns.
 */
export function showText(run: StoredRun, colors: Colors = plain): string {
  const details = box(runDetailLines(run, colors).join("\n"), `Run: ${printableLine(run.id)}`, colors);
  return [details, ...caseResultLines(run, colors)].join("\n");
}

/**
 * sniffbench's delta: an arrow and the change in percent with one decimal; `0.0%` when both are 0, `N/A`
 * when only the first is; green when better (lower, for tokens and cost), red when worse, dim when equal.
 */
export function metricDelta(
  oldValue: number,
  newValue: number,
  lowerIsBetter: boolean,
  colors: Colors,
): string {
  const delta = newValue - oldValue;
  let pct: string;
  if (oldValue === 0 && newValue === 0) pct = "0.0%";
  else if (oldValue === 0) pct = "N/A";
  else {
    const change = (delta / oldValue) * 100;
    pct = change >= 0 ? `+${change.toFixed(1)}%` : `${change.toFixed(1)}%`;
  }
  const color =
    delta === 0
      ? colors.dim
      : (delta < 0 && lowerIsBetter) || (delta > 0 && !lowerIsBetter)
        ? colors.green
        : colors.red;
  return color(`${delta > 0 ? "↑" : delta < 0 ? "↓" : "→"} ${pct}`);
}

const padEnd = (text: string, width: number) => text + " ".repeat(Math.max(0, width - visible(text).length));
const padStart = (text: string, width: number) =>
  " ".repeat(Math.max(0, width - visible(text).length)) + text;

/** A config value as `runs compare` shows it: strings as they are (long ones cut), the rest as JSON, none as `none`. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return "none";
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const line = text.replaceAll("\n", "\\n");
  return line.length > 80 ? `${line.slice(0, 77)}... (${text.length} chars)` : line;
}

type ComparedRun = RunComparison["runs"][0];

/** A run's lines under "Run Information". */
function runInfoLines(name: string, run: ComparedRun, colors: Colors): string[] {
  return [
    `  ${colors.bold(`${name}:`)} ${printableLine(run.id)} ${run.label ? colors.cyan(`[${printableLine(run.label)}]`) : ""}`.trimEnd(),
    `         Created: ${seedDate(run.createdAt)}`,
    `         Agent: ${run.agent} ${run.version ?? ""}`.trimEnd(),
    `         Model: ${printableLine(run.model)}`,
    `         Cases: ${run.cases}   State: ${run.state}`,
  ];
}

/** The config changes key by key, or a line saying there are none. */
function configChangeLines(cmp: RunComparison, colors: Colors, rule: string): string[] {
  if (cmp.configChanges.length === 0) return [colors.dim("\n  No configuration changes detected.\n")];
  return [
    colors.bold("\n  Configuration Changes:\n"),
    rule,
    ...cmp.configChanges.map(
      (c) => `  ${c.field}: ${colors.red(shown(c.old))} → ${colors.green(shown(c.new))}`,
    ),
  ];
}

/** The lines naming the cases only one of the runs has; `gap` before the first. */
function onlyInLines(cmp: RunComparison, colors: Colors, gap: string): string[] {
  const lines: string[] = [];
  if (cmp.onlyInA.length > 0)
    lines.push(colors.dim(`${gap}  Cases only in run 1: ${cmp.onlyInA.join(", ")}`));
  if (cmp.onlyInB.length > 0) lines.push(colors.dim(`  Cases only in run 2: ${cmp.onlyInB.join(", ")}`));
  return lines;
}

/** The case table: grades, tokens and cost with their deltas, exit statuses; then its closing rule. */
function caseComparisonLines(cmp: RunComparison, colors: Colors): string[] {
  const idWidth = Math.max(22, ...cmp.cases.map((c) => c.instance_id.length));
  const header = `${padEnd("Case ID", idWidth)} Grade 1   Grade 2   ${padEnd("Tokens", 29)} ${padEnd("Cost", 28)} Exit status`;
  const lines = [colors.dim(`  ${header}`), colors.dim(`  ${"─".repeat(header.length)}`)];
  const grade = (value: number | null) => (value === null ? "N/A" : `${value}/10`);
  for (const c of cmp.cases) {
    lines.push(
      `  ${padEnd(c.instance_id, idWidth)} ${padEnd(grade(c.a.grade), 9)} ${padEnd(grade(c.b.grade), 9)} ` +
        `${padStart(count(c.a.totalTokens), 6)} → ${padEnd(count(c.b.totalTokens), 6)} ${padEnd(metricDelta(c.a.totalTokens, c.b.totalTokens, true, colors), 12)} ` +
        `${money(c.a.costUsd)} → ${money(c.b.costUsd)} ${padEnd(metricDelta(c.a.costUsd, c.b.costUsd, true, colors), 10)} ` +
        (c.a.exit_status === c.b.exit_status ? c.a.exit_status : `${c.a.exit_status} → ${c.b.exit_status}`),
    );
  }
  lines.push(colors.dim(`\n  ${"─".repeat(header.length)}`));
  return lines;
}

/** The aggregate summary: grades, tokens, cost, submissions, resolutions and steps, run 1 → run 2. */
function aggregateLines(cmp: RunComparison, colors: Colors): string[] {
  const sa = cmp.summary.a;
  const sb = cmp.summary.b;
  const lines = [colors.bold("\n  Aggregate Summary:\n"), `  Cases compared: ${cmp.summary.casesCompared}`];
  if (sa.averageGrade !== null && sb.averageGrade !== null)
    lines.push(
      `  Average grade: ${sa.averageGrade.toFixed(1)} → ${sb.averageGrade.toFixed(1)} ${metricDelta(sa.averageGrade, sb.averageGrade, false, colors)}`,
    );
  lines.push(
    `  Total tokens: ${count(sa.totalTokens)} → ${count(sb.totalTokens)} ${metricDelta(sa.totalTokens, sb.totalTokens, true, colors)}`,
    `  Total cost: ${money(sa.costUsd)} → ${money(sb.costUsd)} ${metricDelta(sa.costUsd, sb.costUsd, true, colors)}`,
    `  Submitted: ${sa.submitted} → ${sb.submitted}`,
    `  Resolved: ${sa.resolved ?? "-"} → ${sb.resolved ?? "-"}`,
    `  Steps: ${sa.steps} → ${sb.steps}`,
  );
  return lines;
}

/** swerun's flips: an instance resolved, or submitted, in one run only (green when run 2 gained it). */
function flipLines(cmp: RunComparison, colors: Colors): string[] {
  const [a, b] = cmp.runs as [ComparedRun, ComparedRun];
  const lines = [colors.bold("\n  Flips:\n")];
  if (cmp.flips.length === 0) lines.push("  None: every common case has the same outcome.");
  const name = (run: ComparedRun) => printableLine(run.label ?? run.id);
  for (const f of cmp.flips) {
    const text = `  ${f.instance_id}: ${f.kind} only in ${f.direction === "gained" ? name(b) : name(a)}`;
    lines.push(f.direction === "gained" ? colors.green(text) : colors.red(text));
  }
  return lines;
}

/**
 * `swerun runs compare`, laid out as `sniff compare`: the "Run Comparison" box, the two runs, the config
 * changes key by key (dotted paths, old → new), the cases (grades, tokens and cost with their deltas), the
 * aggregate summary; then swerun's flips (an instance resolved, or submitted, in one run only).
 */
export function compareText(cmp: RunComparison, colors: Colors): string {
  const [a, b] = cmp.runs as [ComparedRun, ComparedRun];
  const rule = colors.dim("  ─".repeat(40));
  const lines = [
    box(
      `${colors.bold("Run Comparison")}\n\n${colors.dim("Comparing two evaluation runs side-by-side.")}`,
      "swerun runs compare",
      colors,
    ),
    colors.bold("\n  Run Information:\n"),
    rule,
    ...runInfoLines("Run 1", a, colors),
    "",
    ...runInfoLines("Run 2", b, colors),
    ...configChangeLines(cmp, colors, rule),
    colors.bold("\n  Case Comparison:\n"),
    rule,
  ];
  if (cmp.cases.length === 0) {
    return [...lines, "  No common cases to compare.", ...onlyInLines(cmp, colors, "")].join("\n");
  }
  lines.push(...caseComparisonLines(cmp, colors), ...aggregateLines(cmp, colors));
  lines.push(...onlyInLines(cmp, colors, "\n"), ...flipLines(cmp, colors), "");
  return lines.join("\n");
}
