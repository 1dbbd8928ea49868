import { stripVTControlCharacters } from "node:util";
import pc from "picocolors";
import { printableLine } from "../util/printable.js";
import type { RunComparison } from "./compare.js";
import type { StoredRun } from "./store.js";

type Colors = Pick<typeof pc, "green" | "red" | "bold" | "dim">;
const plain: Colors = { green: String, red: String, bold: String, dim: String } as unknown as Colors;
export const colorsFor = (tty: boolean): Colors => (tty ? pc : plain);

/** Columns padded to their widest cell. */
export function table(rows: string[][], visible = (cell: string) => stripVTControlCharacters(cell)): string {
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

const date = (iso: string) => (iso ? iso.slice(0, 16).replace("T", " ") : "-");
const money = (value: number) => `$${value.toFixed(4)}`;

function counts(run: StoredRun) {
  const cases = Object.values(run.cases);
  const graded = cases.filter((c) => typeof c.resolved === "boolean");
  return {
    finished: cases.length,
    submitted: cases.filter((c) => c.submitted).length,
    resolved: graded.length > 0 ? graded.filter((c) => c.resolved).length : null,
  };
}

/** `swerun runs list`, as JSON. */
export function listJson(runs: StoredRun[]) {
  return runs.map((run) => {
    const n = counts(run);
    return {
      id: run.id,
      label: run.label,
      created: run.created,
      model: run.model,
      cases_finished: n.finished,
      cases_total: run.total,
      submitted: n.submitted,
      resolved: n.resolved,
      cost: run.totals.costUsd,
      state: run.state,
      imported: run.imported,
      ...(run.unreadable ? { unreadable: run.unreadable } : {}),
      dir: run.dir,
    };
  });
}

export function listText(runs: StoredRun[]): string {
  if (runs.length === 0) return "No runs found.";
  const rows = [["ID", "Label", "Date", "Model", "Cases", "Submitted", "Resolved", "Cost", "State"]];
  for (const run of listJson(runs)) {
    rows.push([
      printableLine(run.id),
      printableLine(run.label ?? "(none)"),
      date(run.created),
      printableLine(run.model || "-"),
      `${run.cases_finished}/${run.cases_total}`,
      String(run.submitted),
      run.resolved === null ? "-" : String(run.resolved),
      money(run.cost),
      run.state + (run.unreadable ? " (run.json unreadable)" : run.imported ? " (imported)" : ""),
    ]);
  }
  return `${runs.length} run${runs.length === 1 ? "" : "s"}\n\n${table(rows)}`;
}

/** `swerun runs show`, as JSON. */
export function showJson(run: StoredRun) {
  const n = counts(run);
  return {
    id: run.id,
    label: run.label,
    dir: run.dir,
    created: run.created,
    ended: run.ended,
    state: run.state,
    imported: run.imported,
    model: run.model,
    agent: run.agent,
    dataset: run.dataset,
    summary: {
      cases_finished: n.finished,
      cases_total: run.total,
      submitted: n.submitted,
      resolved: n.resolved,
    },
    totals: run.totals,
    cases: run.cases,
  };
}

export function showText(run: StoredRun): string {
  const n = counts(run);
  const lines = [
    `Run: ${printableLine(run.id)}${run.unreadable ? ` (run.json could not be read: ${printableLine(run.unreadable)})` : run.imported ? " (imported)" : ""}`,
    `Label: ${printableLine(run.label ?? "(none)")}`,
    `Folder: ${run.dir}`,
    `Created: ${date(run.created)}   State: ${run.state}`,
    "",
    "Agent Configuration:",
  ];
  if (run.agent) {
    const a = run.agent;
    lines.push(
      `  swerun: ${a.version}`,
      `  Model: ${a.model} (${a.model_class})`,
      ...Object.entries(a.template_sha256).map(([key, hash]) => `  ${key}: ${hash.slice(0, 12)}...`),
      `  Config: ${a.config_sha256.slice(0, 12)}...`,
      `  Limits: ${a.step_limit ? `${a.step_limit} steps` : "no step limit"}, ${a.cost_limit ? `$${a.cost_limit}` : "no cost limit"}, ${a.wall_time_limit_seconds ? `${a.wall_time_limit_seconds} s` : "no time limit"}`,
      `  Environment: ${a.environment_class}${a.exec_mode ? ` (${a.exec_mode})` : ""}${a.image_template ? `, image ${a.image_template}` : ""}`,
    );
  } else lines.push(`  Model: ${run.model || "-"}`, "  (not recorded)");
  if (run.dataset) {
    const d = run.dataset;
    const parts = [`${d.subset}/${d.split}`];
    if (d.slice) parts.push(`slice ${d.slice}`);
    if (d.filter) parts.push(`filter ${d.filter}`);
    if (d.instance_ids) parts.push(`ids ${d.instance_ids}`);
    if (d.shard) parts.push(`shard ${d.shard}`);
    lines.push(`  Dataset: ${parts.join(", ")}`);
  }
  const t = run.totals;
  lines.push(
    "",
    "Summary:",
    `  Cases: ${n.finished}/${run.total} finished, ${n.submitted} submitted${n.resolved === null ? "" : `, ${n.resolved} resolved`}`,
    `  Cost: ${money(t.costUsd)}   Tokens: ${t.totalTokens} (cache read ${t.cacheReadTokens})   Steps: ${t.steps}`,
    `  Commands: ${t.toolCount} (reads ${t.readCount}, exploration ${t.explorationRatio})   Format errors: ${t.formatErrors}   Timeouts: ${t.timeouts}`,
    "",
    "Case Results:",
    "",
  );
  const rows = [["Case ID", "Exit status", "Resolved", "Steps", "Tokens", "Cost", "Duration"]];
  for (const [id, c] of Object.entries(run.cases).sort(([a], [b]) => (a < b ? -1 : 1))) {
    rows.push([
      id,
      c.exit_status,
      c.resolved === undefined ? "-" : c.resolved ? "yes" : "no",
      String(c.steps),
      String(c.behaviorMetrics.totalTokens),
      money(c.cost),
      `${c.duration_s.toFixed(1)}s`,
    ]);
  }
  lines.push(table(rows).replace(/^/gm, "  "));
  return lines.join("\n");
}

function change(a: number, b: number, pct: number | null, colors: Colors): string {
  if (a === b) return "→ 0%";
  const arrow = b > a ? "↑" : "↓";
  const text = `${arrow} ${pct === null ? "new" : `${pct > 0 ? "+" : ""}${pct}%`}`;
  return b < a ? colors.green(text) : colors.red(text);
}

const yesNo = (value: boolean | null) => (value === null ? "-" : value ? "yes" : "no");
const label = (run: { id: string; label: string | null }) => printableLine(run.label ?? run.id);

/** `swerun runs compare`, laid out as `sniff compare`, flips first. */
export function compareText(cmp: RunComparison, colors: Colors): string {
  const [a, b] = cmp.runs as [RunComparison["runs"][0], RunComparison["runs"][0]];
  const lines = [
    colors.bold("Run Information"),
    "",
    table([
      ["", "Run A", "Run B"],
      ["ID", printableLine(a.id), printableLine(b.id)],
      ["Label", printableLine(a.label ?? "(none)"), printableLine(b.label ?? "(none)")],
      ["Date", date(a.created), date(b.created)],
      ["Model", a.model, b.model],
      ["Cases", String(a.cases), String(b.cases)],
      ["State", a.state, b.state],
    ]).replace(/^/gm, "  "),
    "",
    colors.bold("Configuration Changes"),
    "",
  ];
  if (cmp.configChanges.length === 0) lines.push("  No configuration changes detected.");
  const shown = (value: unknown) =>
    typeof value === "string" && /^[0-9a-f]{64}$/.test(value)
      ? `${value.slice(0, 12)}...`
      : JSON.stringify(value);
  for (const c of cmp.configChanges) lines.push(`  ${c.field}: ${shown(c.old)} → ${shown(c.new)}`);
  lines.push("", colors.bold("Flips"), "");
  if (cmp.flips.length === 0) lines.push("  None: every common case has the same outcome.");
  for (const f of cmp.flips) {
    const text = `  ${f.instance_id}: ${f.direction === "gained" ? `${f.kind} only in ${label(b)}` : `${f.kind} only in ${label(a)}`}`;
    lines.push(f.direction === "gained" ? colors.green(text) : colors.red(text));
  }
  lines.push("", colors.bold(`Case Comparison (${cmp.summary.casesCompared} common cases)`), "");
  const rows = [
    [
      "Case ID",
      "Exit status A → B",
      "Resolved",
      "Tokens A",
      "Tokens B",
      "Δ tokens",
      "Cost A",
      "Cost B",
      "Δ cost",
    ],
  ];
  for (const c of cmp.cases) {
    rows.push([
      c.instance_id,
      c.a.exit_status === c.b.exit_status ? c.a.exit_status : `${c.a.exit_status} → ${c.b.exit_status}`,
      `${yesNo(c.a.resolved)} → ${yesNo(c.b.resolved)}`,
      String(c.a.totalTokens),
      String(c.b.totalTokens),
      change(c.a.totalTokens, c.b.totalTokens, c.tokensChangePct, colors),
      money(c.a.costUsd),
      money(c.b.costUsd),
      change(c.a.costUsd, c.b.costUsd, c.costChangePct, colors),
    ]);
  }
  lines.push(table(rows).replace(/^/gm, "  "));
  const sa = cmp.summary.a;
  const sb = cmp.summary.b;
  const rate = (s: typeof sa) => (s.resolveRate === null ? "-" : `${s.resolveRate}%`);
  lines.push(
    "",
    colors.bold("Aggregate Summary"),
    "",
    table([
      ["", "Run A", "Run B"],
      ["Cases compared", String(cmp.summary.casesCompared), String(cmp.summary.casesCompared)],
      ["Submitted", String(sa.submitted), String(sb.submitted)],
      [
        "Resolved",
        sa.resolved === null ? "-" : String(sa.resolved),
        sb.resolved === null ? "-" : String(sb.resolved),
      ],
      ["Resolve rate", rate(sa), rate(sb)],
      ["Total tokens", String(sa.totalTokens), String(sb.totalTokens)],
      ["Total cost", money(sa.costUsd), money(sb.costUsd)],
      ["Steps", String(sa.steps), String(sb.steps)],
    ]).replace(/^/gm, "  "),
  );
  if (cmp.onlyInA.length > 0 || cmp.onlyInB.length > 0) {
    lines.push("", colors.bold("Cases in one run only"), "");
    if (cmp.onlyInA.length > 0) lines.push(`  only in A (${cmp.onlyInA.length}): ${cmp.onlyInA.join(", ")}`);
    if (cmp.onlyInB.length > 0) lines.push(`  only in B (${cmp.onlyInB.length}): ${cmp.onlyInB.join(", ")}`);
  }
  return lines.join("\n");
}
