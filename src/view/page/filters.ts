// The filters above the instance table: every instance or the flips when comparing, else a chip per exit
// status; and the instance id filter.
import { byId, COMPARE, FIRST_RUN, fmtCount, h, statusHelp, statusKind } from "./dom.js";
import { compare, overview, renderTable } from "./instance-table.js";

/** The filters above the instance table: flips or all when comparing, else one chip per exit status; then the text filter. */
export function filters(): HTMLElement {
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
