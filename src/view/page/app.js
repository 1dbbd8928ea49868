// The page: header with search, the overview, the instance view chosen by the URL's #<instance id>, and
// keyboard navigation (j/k steps, n/p instances, / search, Esc back, ? keys).

const view = { current: null, step: 0, pendingStep: null, expandOutput: false };

function header() {
  const input = h("input", {
    type: "search",
    id: "search",
    placeholder: "Search every command and output (/)",
    title: "Plain text, or a regular expression with the box ticked; case does not matter",
    "aria-label": "Search commands and outputs",
  });
  const regex = h("input", { type: "checkbox", id: "search-regex" });
  const form = h(
    "form",
    {
      class: "search",
      role: "search",
      onsubmit: (event) => {
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

function keysHelp() {
  const keys = [
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

function toggleKeys() {
  const keys = document.getElementById("keys");
  keys.hidden = !keys.hidden;
}

function route() {
  const id = decodeURIComponent(location.hash.slice(1));
  const overviewNode = document.getElementById("overview");
  const instanceNode = document.getElementById("instance-view");
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

/** Opens an instance at a step (from a search hit), expanding the step's outputs when the hit is there. */
function openStep(id, step, expand) {
  view.pendingStep = step;
  view.expandOutput = expand;
  const hash = `#${encodeURIComponent(id)}`;
  if (location.hash === hash && view.current === id) {
    view.pendingStep = null;
    goToStep(step, expand);
  } else location.hash = hash;
}

function stepNumbers() {
  const numbers = new Set();
  for (const node of document.querySelectorAll("#instance .step[data-step]"))
    numbers.add(node.getAttribute("data-step"));
  return [...numbers];
}

function goToStep(step, expand) {
  const numbers = stepNumbers();
  const index = numbers.indexOf(String(step));
  if (index < 0) return;
  view.step = index;
  markStep(expand);
}

function markStep(expand) {
  const numbers = stepNumbers();
  const key = numbers[view.step];
  for (const node of document.querySelectorAll("#instance .step.current")) node.classList.remove("current");
  const nodes = document.querySelectorAll(`#instance .step[data-step="${key}"]`);
  for (const node of nodes) {
    node.classList.add("current");
    if (expand)
      for (const button of node.querySelectorAll("button.expand"))
        if (button.textContent !== "Show less") button.click();
  }
  if (nodes[0]) {
    nodes[0].scrollIntoView({ block: "start" });
    nodes[0].focus({ preventScroll: true });
  }
}

function moveStep(delta) {
  const count = stepNumbers().length;
  if (count === 0) return;
  const anyCurrent = document.querySelector("#instance .step.current");
  view.step = anyCurrent ? Math.max(0, Math.min(count - 1, view.step + delta)) : delta > 0 ? 0 : count - 1;
  markStep(false);
}

function moveInstance(delta) {
  const order = overview.order.length ? overview.order : DATA.runs[0].rows.map((row) => row.id);
  if (order.length === 0) return;
  // The hash changes at once and the view when its hashchange arrives: count from the instance last asked
  // for, so that keys pressed quickly in a row each move one instance.
  const asked = location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : null;
  const from = asked !== null && order.includes(asked) ? asked : view.current;
  const at = from === null ? overview.selected - (delta > 0 ? 1 : -1) : order.indexOf(from);
  const next = order[Math.max(0, Math.min(order.length - 1, at + delta))];
  if (next !== undefined) location.hash = `#${encodeURIComponent(next)}`;
}

function onKey(event) {
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
      document.getElementById("search").focus();
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

function start() {
  const app = document.getElementById("app");
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
  const only = DATA.mode === "trajectories" && DATA.runs[0].rows.length === 1 ? DATA.runs[0].rows[0] : null;
  if (!location.hash && only) history.replaceState(null, "", `#${encodeURIComponent(only.id)}`);
  route();
  document.documentElement.setAttribute("data-ready", "overview");
  window.swerunReadyAt = performance.now();
}

start();
