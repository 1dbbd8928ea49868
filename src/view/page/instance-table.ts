// The instance table: its state (sort, filters, selected row), the rows it shows in their order, its header
// of sort buttons, and the selected row that j/k move.
import type { InstanceRow, ViewCompare, ViewRun } from "../model.js";
import { byId, COMPARE, DATA, FIRST_RUN, fmtCount, h, plural } from "./dom.js";
import {
  COLUMNS,
  type Column,
  compareColumns,
  compareRow,
  instanceRow,
  type SideBySide,
} from "./table-rows.js";

type SortValue = string | number | boolean | null | undefined;

/** The compare data; only read in compare mode, where the page always has it. */
export const compare = () => DATA.compare as ViewCompare;

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

/** Draws the table's header and rows as its state says (sort, filters), and the count of rows shown. */
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
