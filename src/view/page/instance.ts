// One instance: problem statement, a chart of cumulative cost and prompt tokens, the steps, the submission
// as a diff and the evaluation verdict. In compare mode, both runs' instances next to each other.
import type { InstanceDetail, InstanceRow, ViewRun } from "../model.js";
import { chart } from "./chart.js";
import { renderDiff } from "./diff.js";
import {
  type Child,
  COMPARE,
  DATA,
  FIRST_RUN,
  fmtCount,
  fmtMoney,
  fmtSeconds,
  h,
  loadDetail,
  plural,
  runLabel,
  statusBadge,
  verdictBadge,
} from "./dom.js";
import { overview } from "./instance-table.js";
import { moveInstance } from "./navigation.js";
import { steps } from "./steps.js";
import { verdictView } from "./verdict.js";

/** One run's side of an instance: its row and detail record, when the run has them. */
interface Side {
  run: ViewRun;
  runIndex: number;
  row: InstanceRow | undefined;
  detail: InstanceDetail | null;
}

export async function renderInstance(container: HTMLElement, id: string): Promise<void> {
  container.replaceChildren(h("p", { class: "loading" }, `Loading ${id}…`));
  const sides = await Promise.all(
    DATA.runs.map(async (run, runIndex): Promise<Side> => {
      const row = run.rows.find((r) => r.id === id);
      const detail = row && row.detail !== null ? await loadDetail(runIndex, row.detail) : null;
      return { run, runIndex, row, detail };
    }),
  );
  if (sides.every((side) => !side.row)) {
    container.replaceChildren(nav(id), h("p", { class: "banner" }, `No instance ${id} in this page.`));
    return;
  }
  const columns = sides.map((side) => instanceColumn(side));
  container.replaceChildren(
    nav(id),
    h("div", { class: COMPARE ? "columns" : "single", id: "instance", "data-loaded": id }, columns),
  );
}

function nav(id: string): HTMLElement {
  const order = overview.order.length ? overview.order : FIRST_RUN.rows.map((row) => row.id);
  const at = order.indexOf(id);
  return h(
    "nav",
    { class: "crumbs" },
    h("a", { href: "#", title: "Back to the instance table (Esc)" }, "← All instances"),
    h("span", { class: "position" }, at >= 0 ? `instance ${at + 1} of ${order.length}` : ""),
    h(
      "button",
      { type: "button", title: "Previous instance (p)", onclick: () => moveInstance(-1) },
      "◀ previous (p)",
    ),
    h("button", { type: "button", title: "Next instance (n)", onclick: () => moveInstance(1) }, "next (n) ▶"),
  );
}

/** One run's side of an instance: its heading and facts, then its trajectory's sections when there is one. */
function instanceColumn({ run, runIndex, row, detail }: Side): HTMLElement {
  const column = h("div", { class: "column", "data-run": runIndex });
  if (COMPARE)
    column.append(
      h("div", { class: "column-run" }, h("span", { class: "side-tag" }, runLabel(runIndex)), run.name),
    );
  if (!row) {
    column.append(h("p", { class: "missing" }, "This instance is not in this run."));
    return column;
  }
  column.append(h("h2", { class: "instance-id" }, row.id), instanceFacts(row));
  if (!detail) {
    column.append(
      h(
        "p",
        { class: "banner" },
        "No trajectory file was found for this instance; the row comes from run.json.",
      ),
    );
    return column;
  }
  if (detail.model || detail.path)
    column.append(
      h("p", { class: "hint" }, detail.model ? `Model ${detail.model} · ` : "", `Trajectory: ${detail.path}`),
    );
  column.append(...detailSections(detail));
  return column;
}

/** The instance's status and verdict badges, and its steps, cost, tokens and wall time. */
function instanceFacts(row: InstanceRow): HTMLElement {
  return h(
    "p",
    { class: "facts" },
    statusBadge(row.exit_status),
    " ",
    verdictBadge(row.resolved, row.verdict),
    " ",
    h(
      "span",
      { class: "meta" },
      `${plural(row.steps, "step")} · ${fmtMoney(row.cost)} · ${fmtCount(row.tokens)} tokens · ${fmtSeconds(row.wall_s)}`,
    ),
  );
}

/** The sections of a trajectory: the problem, the chart, the steps, the submission and the evaluation. */
function detailSections(detail: InstanceDetail): HTMLElement[] {
  return [
    section(
      "Problem statement",
      h(
        "details",
        { open: true, class: "problem" },
        h("summary", null, "The task the agent was given"),
        h("pre", null, detail.problem || "(not recorded)"),
      ),
    ),
    section("Cost and prompt tokens per step", chart(detail.steps)),
    section(
      `Steps (${detail.steps.length})`,
      h("p", { class: "hint" }, "j/k move between steps. Long outputs are collapsed: click to see all."),
      steps(detail),
    ),
    section(
      "Submission",
      detail.submission.trim()
        ? renderDiff(detail.submission)
        : h("p", { class: "hint" }, "No patch was submitted."),
    ),
    section("Evaluation", verdictView(detail.verdict)),
  ];
}

function section(title: string, ...children: Child[]): HTMLElement {
  return h("section", { class: "part" }, h("h3", null, title), children);
}
