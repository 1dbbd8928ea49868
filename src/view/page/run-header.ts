// The head of the overview: a run's settings and totals (and a banner while it runs), or when comparing, both
// runs and the settings that differ between them.
import type { ViewRun } from "../model.js";
import { COMPARE, DATA, h, plural, runLabel } from "./dom.js";
import { compare } from "./instance-table.js";

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

export function runHeader(run: ViewRun, index: number): HTMLElement {
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

export function compareHeader(): HTMLElement {
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
