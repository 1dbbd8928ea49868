// `swerun runs compare` as text, laid out as sniffbench's `sniff compare`.
import { count, usd } from "../facts/figures.js";
import { printableLine } from "../util/printable.js";
import type { RunComparison } from "./compare.js";
import { box, type Colors, padEnd, padStart, seedDate } from "./terminal-layout.js";

const money = usd;

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
