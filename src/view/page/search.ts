// Search across every command and output of the page's runs (plain text or a regular expression, case
// does not matter), with hits listed by instance and step.
import { byId, COMPARE, DATA, h, loadDetail, plural, runLabel } from "./dom.js";
import { openStep } from "./navigation.js";

/** Where a search matched: a command or an output of a step's call. */
interface Hit {
  step: number;
  call: number;
  field: "command" | "output";
  text: string;
  at: number;
  length: number;
}

interface HitGroup {
  runIndex: number;
  id: string;
  found: Hit[];
}

const MAX_HITS = 1000;
let searchToken = 0;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export async function runSearch(query: string, isRegex: boolean): Promise<void> {
  const panel = byId("search-results");
  const token = ++searchToken;
  if (!query) {
    panel.hidden = true;
    panel.replaceChildren();
    return;
  }
  let pattern: RegExp;
  try {
    pattern = new RegExp(isRegex ? query : escapeRegExp(query), "i");
  } catch (error) {
    showResults(panel, [
      h("p", { class: "banner" }, `Not a valid regular expression: ${(error as Error).message}`),
    ]);
    return;
  }
  const status = h("p", { class: "hint", id: "search-status" }, "Searching…");
  showResults(panel, [status]);
  const groups: HitGroup[] = [];
  let hits = 0;
  let searched = 0;
  for (const [runIndex, run] of DATA.runs.entries()) {
    for (const row of run.rows) {
      if (row.detail === null) continue;
      const detail = await loadDetail(runIndex, row.detail);
      if (token !== searchToken) return;
      searched += 1;
      if (searched % 50 === 0) status.textContent = `Searching… ${searched} instances so far`;
      const found: Hit[] = [];
      for (const step of detail ? detail.steps : []) {
        step.calls.forEach((call, index) => {
          for (const field of ["command", "output"] as const) {
            if (hits >= MAX_HITS) return;
            const match = pattern.exec(call[field]);
            if (!match) continue;
            hits += 1;
            found.push({
              step: step.n,
              call: index,
              field,
              text: call[field],
              at: match.index,
              length: match[0].length,
            });
          }
        });
      }
      if (found.length) groups.push({ runIndex, id: row.id, found });
    }
  }
  const instances = new Set(groups.map((group) => group.id)).size;
  status.textContent =
    hits === 0
      ? `No command or output matches ${isRegex ? "the regular expression" : "the text"} “${query}”.`
      : `${plural(hits, "hit")} in ${plural(instances, "instance")}${hits >= MAX_HITS ? ` (stopped at ${MAX_HITS})` : ""}. Click a hit to open its step.`;
  panel.append(h("div", { class: "hits" }, groups.map(hitGroup)));
}

function showResults(panel: HTMLElement, children: HTMLElement[]): void {
  panel.hidden = false;
  panel.replaceChildren(
    h(
      "div",
      { class: "results-head" },
      h("h2", null, "Search results"),
      h(
        "button",
        {
          type: "button",
          class: "close",
          title: "Close the results (Esc in the search box)",
          onclick: closeSearch,
        },
        "✕ close",
      ),
    ),
    ...children,
  );
}

export function closeSearch(): void {
  const panel = byId("search-results");
  panel.hidden = true;
  panel.replaceChildren();
  searchToken += 1;
}

function hitGroup(group: HitGroup): HTMLElement {
  return h(
    "section",
    { class: "hit-group", "data-id": group.id, "data-run": group.runIndex },
    h(
      "h3",
      null,
      COMPARE ? h("span", { class: "side-tag" }, runLabel(group.runIndex)) : null,
      group.id,
      h("span", { class: "count" }, plural(group.found.length, "hit")),
    ),
    h(
      "ul",
      null,
      group.found.map((hit) =>
        h(
          "li",
          null,
          h(
            "a",
            {
              href: `#${encodeURIComponent(group.id)}`,
              class: "hit",
              "data-step": hit.step,
              onclick: (event: Event) => {
                event.preventDefault();
                openStep(group.id, hit.step, hit.field === "output");
              },
            },
            `step ${hit.step} · ${hit.field}`,
          ),
          " ",
          snippet(hit),
        ),
      ),
    ),
  );
}

function snippet(hit: Hit): HTMLElement {
  const before = hit.text.slice(Math.max(0, hit.at - 60), hit.at);
  const match = hit.text.slice(hit.at, hit.at + Math.max(hit.length, 1));
  const after = hit.text.slice(hit.at + Math.max(hit.length, 1), hit.at + Math.max(hit.length, 1) + 80);
  return h("code", { class: "snippet" }, hit.at > 60 ? "…" : "", before, h("mark", null, match), after);
}
