// `swerun runs list` and `swerun runs show`, as text laid out as sniffbench's and as JSON.
import { count, seconds, usd } from "../facts/figures.js";
import { printableLine } from "../util/printable.js";
import type { StoredRun } from "./store.js";
import { box, type Colors, plain, seedDate, table } from "./terminal-layout.js";

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
