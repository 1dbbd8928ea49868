// The rows of the instance table: its columns, one row per instance of a run, or one per instance of either run
// when comparing two (each run's side, and whether the instance flipped between them).
import type { CompareRow, InstanceRow } from "../model.js";
import { fmtCount, fmtMoney, fmtSeconds, h, plural, statusBadge, verdictBadge } from "./dom.js";

/** A column of the instance table: `key` is what it sorts by. */
export interface Column {
  key: string;
  label: string;
  title: string;
  num?: boolean;
}

/** A row of the compare table: the instance's row in each run (null where it is missing). */
export interface SideBySide {
  id: string;
  flip: CompareRow["flip"];
  flip_kind: CompareRow["flip_kind"];
  a: InstanceRow | null;
  b: InstanceRow | null;
}

/** The columns of one run's table. */
export const COLUMNS: Column[] = [
  { key: "id", label: "Instance", title: "The instance id; click to open its steps" },
  { key: "exit_status", label: "Exit status", title: "How the agent's run ended (see the legend below)" },
  { key: "resolved", label: "Resolved", title: "The evaluation verdict, when the run was evaluated" },
  { key: "steps", label: "Steps", title: "Model calls", num: true },
  { key: "cost", label: "Cost", title: "Model cost in US dollars", num: true },
  {
    key: "tokens",
    label: "Tokens",
    title:
      "Total tokens: input not read from or written to the cache, plus output (as every swerun output counts them)",
    num: true,
  },
  { key: "wall_s", label: "Wall time", title: "From the first to the last recorded message", num: true },
  { key: "patch_lines", label: "Patch lines", title: "Lines the submitted patch adds or removes", num: true },
  {
    key: "problems",
    label: "Problems",
    title: "Format errors (replies that could not be run) and commands that timed out",
    num: true,
  },
];

function openCell(id: string): HTMLElement {
  return h(
    "td",
    { class: "id" },
    h("a", { href: `#${encodeURIComponent(id)}`, title: "Open this instance" }, id),
  );
}

function problemsCell(row: InstanceRow | null): HTMLElement {
  if (!row) return h("td", { class: "num" }, "—");
  const parts = [];
  if (row.format_errors) parts.push(plural(row.format_errors, "format error"));
  if (row.timeouts) parts.push(plural(row.timeouts, "timeout"));
  return h(
    "td",
    { class: `num${parts.length ? " warn" : ""}`, title: parts.join(", ") || "none" },
    parts.length ? parts.join(", ") : "—",
  );
}

/** One run's row of an instance. */
export function instanceRow(row: InstanceRow, index: number): HTMLElement {
  return h(
    "tr",
    { "data-id": row.id, "data-index": index, onclick: (event: Event) => openFromRow(event, row.id) },
    openCell(row.id),
    h("td", null, statusBadge(row.exit_status)),
    h("td", null, verdictBadge(row.resolved, row.verdict)),
    h("td", { class: "num" }, fmtCount(row.steps)),
    h("td", { class: "num" }, fmtMoney(row.cost)),
    h("td", { class: "num" }, fmtCount(row.tokens)),
    h("td", { class: "num" }, fmtSeconds(row.wall_s)),
    h("td", { class: "num" }, fmtCount(row.patch_lines)),
    problemsCell(row),
  );
}

/** The columns of the compare table: the instance, its flip, then each run's side. */
export function compareColumns(): Column[] {
  const side = (s: string): Column[] => [
    {
      key: `${s}.exit_status`,
      label: `${s.toUpperCase()}: exit status`,
      title: `How run ${s.toUpperCase()} ended`,
    },
    {
      key: `${s}.resolved`,
      label: `${s.toUpperCase()}: resolved`,
      title: `Run ${s.toUpperCase()}'s evaluation verdict`,
    },
    { key: `${s}.steps`, label: `${s.toUpperCase()}: steps`, title: "Model calls", num: true },
    { key: `${s}.cost`, label: `${s.toUpperCase()}: cost`, title: "Model cost in US dollars", num: true },
  ];
  return [
    { key: "id", label: "Instance", title: "The instance id; click to open both runs side by side" },
    { key: "flip", label: "Change", title: "Gained: resolved (or submitted) only in B. Lost: only in A." },
    ...side("a"),
    ...side("b"),
  ];
}

/** The compare table's row of an instance: its flip, then what each run made of it. */
export function compareRow(row: SideBySide, index: number): HTMLElement {
  const side = (value: InstanceRow | null) =>
    value
      ? [
          h("td", null, statusBadge(value.exit_status)),
          h("td", null, verdictBadge(value.resolved, value.verdict)),
          h("td", { class: "num" }, fmtCount(value.steps)),
          h("td", { class: "num" }, fmtMoney(value.cost)),
        ]
      : [h("td", { colspan: 4, class: "missing" }, "not in this run")];
  const flip = row.flip
    ? h(
        "span",
        {
          class: `badge flip-${row.flip}`,
          title: `${row.flip_kind === "resolved" ? "Resolved" : "Submitted"} only in run ${row.flip === "gained" ? "B" : "A"}`,
        },
        `${row.flip === "gained" ? "▲ gained" : "▼ lost"} (${row.flip_kind})`,
      )
    : "";
  return h(
    "tr",
    {
      "data-id": row.id,
      "data-index": index,
      class: row.flip ? "flipped" : null,
      onclick: (event: Event) => openFromRow(event, row.id),
    },
    openCell(row.id),
    h("td", null, flip),
    side(row.a),
    side(row.b),
  );
}

function openFromRow(event: Event, id: string): void {
  if ((event.target as Element).closest("a")) return;
  location.hash = `#${encodeURIComponent(id)}`;
}
