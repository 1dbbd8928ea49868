// The page: header with search, the overview, the instance view chosen by the URL's #<instance id>, and
// keyboard navigation (j/k steps, n/p instances, / search, Esc back, ? keys).
import { byId, DATA, FIRST_RUN, h } from "./dom.js";
import { renderInstance } from "./instance.js";
import { moveSelection, overview, selectedId } from "./instance-table.js";
import { goToStep, moveInstance, moveStep, view } from "./navigation.js";
import { renderOverview } from "./overview.js";
import { closeSearch, runSearch } from "./search.js";

function header(): HTMLElement {
  const input = h("input", {
    type: "search",
    id: "search",
    placeholder: "Search every command and output (/)",
    title: "Plain text, or a regular expression with the box ticked; case does not matter",
    "aria-label": "Search commands and outputs",
  }) as HTMLInputElement;
  const regex = h("input", { type: "checkbox", id: "search-regex" }) as HTMLInputElement;
  const form = h(
    "form",
    {
      class: "search",
      role: "search",
      onsubmit: (event: Event) => {
        event.preventDefault();
        runSearch(input.value, regex.checked);
      },
    },
    input,
    h("label", { title: "Treat the search text as a JavaScript regular expression" }, regex, " regex"),
    h("button", { type: "submit" }, "Search"),
  );
  input.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      input.value = "";
      closeSearch();
      input.blur();
    }
  });
  const when = new Date(DATA.generated_at);
  return h(
    "header",
    { class: "top" },
    h(
      "div",
      { class: "brand" },
      h("a", { href: "#", title: "Back to the overview" }, DATA.title),
      h("span", { class: "sub" }, `swerun view · written ${when.toLocaleString()}`),
    ),
    form,
    h(
      "button",
      { type: "button", class: "keys-button", title: "Keyboard shortcuts", onclick: toggleKeys },
      "Keys (?)",
    ),
  );
}

function keysHelp(): HTMLElement {
  const keys: Array<[string, string]> = [
    ["j / k", "next / previous step (in the table: next / previous row)"],
    ["n / p", "next / previous instance"],
    ["Enter", "open the selected instance"],
    ["/", "search commands and outputs"],
    ["Esc", "back to the instance table"],
    ["?", "show or hide this list"],
  ];
  return h(
    "aside",
    { id: "keys", class: "keys", hidden: true },
    h("h2", null, "Keyboard shortcuts"),
    h(
      "dl",
      null,
      keys.map(([key, what]) => [h("dt", null, h("kbd", null, key)), h("dd", null, what)]),
    ),
  );
}

function toggleKeys(): void {
  const keys = byId("keys");
  keys.hidden = !keys.hidden;
}

function route(): void {
  const id = decodeURIComponent(location.hash.slice(1));
  const overviewNode = byId("overview");
  const instanceNode = byId("instance-view");
  if (!id) {
    view.current = null;
    instanceNode.hidden = true;
    instanceNode.replaceChildren();
    overviewNode.hidden = false;
    document.title = `${DATA.title} · swerun view`;
    return;
  }
  view.current = id;
  view.step = 0;
  overviewNode.hidden = true;
  instanceNode.hidden = false;
  document.title = `${id} · ${DATA.title} · swerun view`;
  renderInstance(instanceNode, id).then(() => {
    if (view.current !== id) return;
    const index = overview.order.indexOf(id);
    if (index >= 0) overview.selected = index;
    if (view.pendingStep !== null) {
      const step = view.pendingStep;
      view.pendingStep = null;
      goToStep(step, view.expandOutput);
    } else window.scrollTo(0, 0);
  });
}

function onKey(event: KeyboardEvent): void {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (
    target instanceof HTMLInputElement ||
    target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement
  )
    return;
  const inInstance = view.current !== null;
  switch (event.key) {
    case "/":
      event.preventDefault();
      byId("search").focus();
      break;
    case "j":
      if (inInstance) moveStep(1);
      else moveSelection(1);
      break;
    case "k":
      if (inInstance) moveStep(-1);
      else moveSelection(-1);
      break;
    case "n":
      moveInstance(1);
      break;
    case "p":
      moveInstance(-1);
      break;
    case "Enter":
      if (!inInstance && !(target instanceof HTMLButtonElement || target instanceof HTMLAnchorElement)) {
        const id = selectedId();
        if (id) location.hash = `#${encodeURIComponent(id)}`;
      }
      break;
    case "Escape":
      if (inInstance) location.hash = "";
      break;
    case "?":
      toggleKeys();
      break;
    default:
      return;
  }
}

function start(): void {
  const app = byId("app");
  const overviewNode = h("main", { id: "overview" });
  app.replaceChildren(
    header(),
    keysHelp(),
    h("section", { id: "search-results", class: "search-results", hidden: true, "aria-live": "polite" }),
    overviewNode,
    h("main", { id: "instance-view", hidden: true }),
    h(
      "footer",
      null,
      `Written by swerun ${DATA.swerun_version}. Everything is in this one file: no server, no network. Keys: j/k steps · n/p instances · / search · ? all keys.`,
    ),
  );
  renderOverview(overviewNode);
  document.addEventListener("keydown", onKey);
  window.addEventListener("hashchange", route);
  const only = DATA.mode === "trajectories" && FIRST_RUN.rows.length === 1 ? FIRST_RUN.rows[0] : null;
  if (!location.hash && only) history.replaceState(null, "", `#${encodeURIComponent(only.id)}`);
  route();
  document.documentElement.setAttribute("data-ready", "overview");
  // When the overview is ready, for bench/view.ts.
  (window as unknown as { swerunReadyAt: number }).swerunReadyAt = performance.now();
}

start();
