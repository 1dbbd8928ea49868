// The overview: the run's settings and totals, then the instance table (sortable, filterable, counts per
// exit status). In compare mode: both runs, what changed between them, and one row per instance, flips first.
import type { CompareRow, InstanceRow, ViewCompare, ViewRun } from "../model.js";
import {
  byId,
  COMPARE,
  DATA,
  FIRST_RUN,
  fmtCount,
  fmtMoney,
  fmtSeconds,
  h,
  plural,
  runLabel,
  statusBadge,
  statusHelp,
  statusKind,
  verdictBadge,
} from "./dom.js";

/** A column of the instance table: `key` is what it sorts by. */
interface Column {
  key: string;
  label: string;
  title: string;
  num?: boolean;
}

/** A row of the compare table: the instance's row in each run (null where it is missing). */
interface SideBySide {
  id: string;
  flip: CompareRow["flip"];
  flip_kind: CompareRow["flip_kind"];
  a: InstanceRow | null;
  b: InstanceRow | null;
}

type SortValue = string | number | boolean | null | undefined;

/** The compare data; only read in compare mode, where the page always has it. */
const compare = () => DATA.compare as ViewCompare;

const COLUMNS: Column[] = [
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

/** The table's state: its sort, filters and selected row. */
export const overview = {
  sort: { key: COMPARE ? null : "id", dir: 1 } as { key: string | null; dir: number },
  statuses: new Set<string>(),
  flipsOnly: false,
  text: "",
  selected: 0,
  /** Instance ids in the table's current order (n/p follow it). */
  order: [] as string[],
};

const problemsOf = (row: InstanceRow | null) => (row ? row.format_errors + row.timeouts : 0);

function sortValue(row: InstanceRow, key: string): SortValue {
  if (key === "problems") return problemsOf(row);
  if (key === "resolved") return row.resolved === null ? -1 : Number(row.resolved);
  return (row as unknown as Record<string, SortValue>)[key];
}

export function renderOverview(container: HTMLElement): void {
  container.replaceChildren(
    COMPARE ? compareHeader() : runHeader(FIRST_RUN, 0),
    h(
      "section",
      { class: "instances" },
      h("h2", null, "Instances"),
      h(
        "p",
        { class: "hint" },
        "Click an instance (or select it with j/k and press Enter) to see its steps. Click a column heading to sort.",
      ),
      filters(),
      h("p", { id: "shown-count", class: "hint" }),
      h("div", { class: "table-wrap" }, h("table", { id: "instances" }, h("thead"), h("tbody"))),
      COMPARE ? null : legend(FIRST_RUN),
    ),
  );
  renderTable();
}

function runningBanner(run: ViewRun): HTMLElement | null {
  if (run.state !== "running" && run.state !== "partial") return null;
  const text =
    run.state === "running"
      ? "This run was still going when this page was written. Run swerun view on the folder again (or keep swerun view --watch running) and reload to see newer instances."
      : "This run stopped before it finished (Ctrl-C or a crash): the table shows the instances it recorded.";
  return h("p", { class: "banner" }, text);
}

function dl(pairs: Array<[string, string]>): HTMLElement {
  return h(
    "dl",
    null,
    pairs.map(([label, value]) => [h("dt", null, label), h("dd", null, value)]),
  );
}

function runHeader(run: ViewRun, index: number): HTMLElement {
  const kind = run.state === "trajectories" ? "Trajectories" : "Run";
  return h(
    "section",
    { class: "run-info" },
    h(
      "h2",
      null,
      COMPARE ? h("span", { class: "side-tag" }, runLabel(index)) : null,
      `${kind}: ${run.name} `,
      h("span", { class: `badge state-${run.state}`, title: stateHelp(run.state) }, run.state),
    ),
    runningBanner(run),
    h(
      "div",
      { class: "cards" },
      h("div", { class: "card" }, h("h3", null, "Settings"), dl(run.settings)),
      h("div", { class: "card" }, h("h3", null, "Totals"), dl(run.totals)),
    ),
  );
}

function stateHelp(state: string): string {
  const help: Record<string, string> = {
    complete: "The run finished every instance it was asked to do.",
    partial: "The run stopped before it finished.",
    running: "The run was still going when this page was written.",
    trajectories: "Trajectory files without a run record (run.json).",
  };
  return help[state] || state;
}

function compareHeader(): HTMLElement {
  const [a, b] = DATA.runs as [ViewRun, ViewRun];
  const changes = compare().config_changes;
  const flips = compare().rows.filter((row) => row.flip);
  return h(
    "div",
    null,
    h("h2", { class: "page-title" }, "Two runs side by side"),
    h(
      "p",
      { class: "hint" },
      `Run A is ${a.name}, run B is ${b.name}. ${plural(flips.length, "instance")} flipped (resolved or submitted in one run only); they come first.`,
    ),
    h("div", { class: "cards two" }, runHeader(a, 0), runHeader(b, 1)),
    changes.length === 0
      ? h("p", { class: "hint" }, "Both runs have the same recorded settings.")
      : h(
          "section",
          { class: "card changes" },
          h("h3", null, `Settings that differ (${changes.length})`),
          h(
            "table",
            null,
            h("thead", null, h("tr", null, h("th", null, "Setting"), h("th", null, "A"), h("th", null, "B"))),
            h(
              "tbody",
              null,
              changes.map((c) =>
                h("tr", null, h("td", null, c.field), h("td", null, c.old), h("td", null, c.new)),
              ),
            ),
          ),
        ),
  );
}

/** The filters above the instance table: flips or all when comparing, else one chip per exit status; then the text filter. */
function filters(): HTMLElement {
  const wrap = h("div", { class: "filters", id: "filters" });
  wrap.append(...(COMPARE ? flipChips() : statusChips()), textFilter());
  return wrap;
}

/** The instance id filter. */
function textFilter(): HTMLElement {
  return h("input", {
    type: "search",
    id: "filter-text",
    placeholder: "Filter by instance id",
    title: "Show only instances whose id contains this text",
    value: overview.text,
    oninput: (event: Event) => {
      overview.text = (event.target as HTMLInputElement).value;
      overview.selected = 0;
      renderTable();
    },
  });
}

/** Comparing: every instance, or the flips only. */
function flipChips(): HTMLElement[] {
  const flips = compare().rows.filter((row) => row.flip).length;
  return [
    h("span", { class: "filter-label" }, "Show:"),
    chip(
      "All",
      compare().rows.length,
      !overview.flipsOnly,
      "Every instance of either run",
      () => {
        overview.flipsOnly = false;
      },
      "all",
    ),
    chip(
      "Flips",
      flips,
      overview.flipsOnly,
      "Instances resolved (or submitted) in one run only",
      () => {
        overview.flipsOnly = true;
      },
      "flips",
    ),
  ];
}

/** One run: all, then a chip per exit status (most frequent first) that adds it to the statuses shown. */
function statusChips(): HTMLElement[] {
  const counts = new Map<string, number>();
  for (const row of FIRST_RUN.rows) {
    const status = row.exit_status || "unknown";
    counts.set(status, (counts.get(status) || 0) + 1);
  }
  return [
    h(
      "span",
      { class: "filter-label", title: "Click a status to show only it; click more to add them" },
      "Exit status:",
    ),
    chip(
      "All",
      FIRST_RUN.rows.length,
      overview.statuses.size === 0,
      "Show every instance",
      () => {
        overview.statuses.clear();
      },
      "all",
    ),
    ...[...counts.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([status, count]) =>
        chip(
          status,
          count,
          overview.statuses.has(status),
          statusHelp(status),
          () => {
            if (overview.statuses.has(status)) overview.statuses.delete(status);
            else overview.statuses.add(status);
          },
          status,
        ),
      ),
  ];
}

function chip(
  label: string,
  count: number,
  active: boolean,
  title: string,
  toggle: () => void,
  key: string,
): HTMLElement {
  const kind = key === "all" || key === "flips" ? "neutral" : statusKind(key);
  return h(
    "button",
    {
      type: "button",
      class: `chip status-${kind}${active ? " active" : ""}`,
      "data-status": key,
      "aria-pressed": active ? "true" : "false",
      title,
      onclick: () => {
        toggle();
        overview.selected = 0;
        byId("filters").replaceWith(filters());
        renderTable();
      },
    },
    label,
    h("span", { class: "count" }, fmtCount(count)),
  );
}

function visibleRows(): SideBySide[] | InstanceRow[] {
  const text = overview.text.trim().toLowerCase();
  if (COMPARE) {
    const [a, b] = DATA.runs as [ViewRun, ViewRun];
    let rows: SideBySide[] = compare().rows.map((row) => ({
      id: row.id,
      flip: row.flip,
      flip_kind: row.flip_kind,
      a: row.a === null ? null : (a.rows[row.a] ?? null),
      b: row.b === null ? null : (b.rows[row.b] ?? null),
    }));
    if (overview.flipsOnly) rows = rows.filter((row) => row.flip);
    if (text) rows = rows.filter((row) => row.id.toLowerCase().includes(text));
    if (overview.sort.key) {
      const { key, dir } = overview.sort;
      rows.sort((x, y) => compareValues(compareSortValue(x, key), compareSortValue(y, key)) * dir);
    }
    return rows;
  }
  let rows = FIRST_RUN.rows.slice();
  if (overview.statuses.size > 0)
    rows = rows.filter((row) => overview.statuses.has(row.exit_status || "unknown"));
  if (text) rows = rows.filter((row) => row.id.toLowerCase().includes(text));
  const { key, dir } = overview.sort;
  rows.sort(
    (x, y) =>
      compareValues(sortValue(x, key ?? "id"), sortValue(y, key ?? "id")) * dir || compareValues(x.id, y.id),
  );
  return rows;
}

function compareSortValue(row: SideBySide, key: string): SortValue {
  if (key === "id") return row.id;
  if (key === "flip") return row.flip ? 0 : 1;
  const [side, field = ""] = key.split(".");
  const value = side === "a" ? row.a : row.b;
  return value ? sortValue(value, field) : -2;
}

function compareValues(x: SortValue, y: SortValue): number {
  if (x === y) return 0;
  if (x === null || x === undefined) return 1;
  if (y === null || y === undefined) return -1;
  if (typeof x === "string") return x.localeCompare(String(y));
  return x < y ? -1 : 1;
}

function headerCell(column: Column): HTMLElement {
  const active = overview.sort.key === column.key;
  const arrow = active ? (overview.sort.dir === 1 ? " ▲" : " ▼") : "";
  return h(
    "th",
    {
      class: column.num ? "num" : null,
      "aria-sort": active ? (overview.sort.dir === 1 ? "ascending" : "descending") : "none",
    },
    h(
      "button",
      {
        type: "button",
        class: "sort",
        "data-key": column.key,
        title: `${column.title} (click to sort)`,
        onclick: () => {
          overview.sort =
            overview.sort.key === column.key
              ? { key: column.key, dir: -overview.sort.dir }
              : { key: column.key, dir: column.num ? -1 : 1 };
          renderTable();
        },
      },
      column.label,
      arrow,
    ),
  );
}

export function renderTable(): void {
  const table = document.getElementById("instances") as HTMLTableElement | null;
  if (!table) return;
  const rows = visibleRows();
  overview.order = rows.map((row) => row.id);
  const columns = COMPARE ? compareColumns() : COLUMNS;
  table.tHead?.replaceChildren(h("tr", null, columns.map(headerCell)));
  const body = document.createDocumentFragment();
  rows.forEach((row, index) => {
    body.append(COMPARE ? compareRow(row as SideBySide, index) : instanceRow(row as InstanceRow, index));
  });
  table.tBodies[0]?.replaceChildren(body);
  const total = COMPARE ? compare().rows.length : FIRST_RUN.rows.length;
  byId("shown-count").textContent =
    rows.length === total
      ? `Showing all ${plural(total, "instance")}`
      : `Showing ${fmtCount(rows.length)} of ${plural(total, "instance")}`;
  markSelected(false);
}

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

function instanceRow(row: InstanceRow, index: number): HTMLElement {
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

function compareColumns(): Column[] {
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

function compareRow(row: SideBySide, index: number): HTMLElement {
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

function legend(run: ViewRun): HTMLElement {
  const present = new Set(run.rows.map((row) => row.exit_status || "unknown"));
  const known = [
    "Submitted",
    "LimitsExceeded",
    "TimeExceeded",
    "RepeatedFormatError",
    "UserInterruption",
    "running",
  ];
  const statuses = [...new Set([...known, ...present])];
  return h(
    "section",
    { class: "legend", id: "legend" },
    h("h3", null, "What the columns mean"),
    h(
      "dl",
      null,
      statuses.map((status) => [h("dt", null, statusBadge(status)), h("dd", null, statusHelp(status))]),
      [true, false, null].map((resolved: boolean | null) => [
        h("dt", null, verdictBadge(resolved)),
        h(
          "dd",
          null,
          resolved === true
            ? "The SWE-bench evaluation ran the instance's tests on the patch and they pass."
            : resolved === false
              ? "The evaluation ran and some required tests fail (or the patch did not apply)."
              : "No evaluation report was found for this instance (run an evaluation to get one).",
        ),
      ]),
      [
        h("dt", null, "Problems"),
        h("dd", null, "Replies the agent could not run (format errors) and commands that ran out of time."),
      ],
    ),
  );
}

/** j/k on the overview: move the selected row. */
export function moveSelection(delta: number): void {
  const rows = document.querySelectorAll("#instances tbody tr");
  if (rows.length === 0) return;
  overview.selected = Math.max(0, Math.min(rows.length - 1, overview.selected + delta));
  markSelected(true);
}

function markSelected(scroll: boolean): void {
  const rows = document.querySelectorAll("#instances tbody tr");
  for (const row of document.querySelectorAll("#instances tbody tr.selected"))
    row.classList.remove("selected");
  const row = rows[overview.selected];
  if (!row) return;
  row.classList.add("selected");
  if (scroll) row.scrollIntoView({ block: "nearest" });
}

export function selectedId(): string | null {
  const row = document.querySelectorAll("#instances tbody tr")[overview.selected];
  return row ? row.getAttribute("data-id") : null;
}
