// The overview: the run's settings and totals, then the instance table (sortable, filterable, counts per
// exit status). In compare mode: both runs, what changed between them, and one row per instance, flips first.
import { COMPARE, FIRST_RUN, h } from "./dom.js";
import { filters } from "./filters.js";
import { renderTable } from "./instance-table.js";
import { legend } from "./legend.js";
import { compareHeader, runHeader } from "./run-header.js";

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
