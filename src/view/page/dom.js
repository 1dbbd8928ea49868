// DOM helpers, formatting and the embedded data. Text from trajectories only ever becomes text nodes or
// attribute values (never markup): h() appends strings as text.

const DATA = JSON.parse(document.getElementById("swerun-view-data").textContent);
const COMPARE = DATA.mode === "compare";
const SVG_NS = "http://www.w3.org/2000/svg";

/** An element with attributes (`class`, `text`, `on<event>`, others as attributes) and children. */
function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  for (const child of children.flat()) if (child) node.append(child);
  return node;
}

function setAttrs(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.setAttribute("class", value);
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
}

const fmtCount = (value) => (value === null || value === undefined ? "—" : value.toLocaleString("en-US"));
function fmtMoney(value) {
  if (value === null || value === undefined) return "—";
  return `$${value.toFixed(value > 0 && value < 0.01 ? 4 : 2)}`;
}
function fmtSeconds(value) {
  if (value === null || value === undefined) return "—";
  if (value < 1) return `${Math.round(value * 1000)} ms`;
  if (value < 60) return `${value.toFixed(1)} s`;
  const minutes = Math.floor(value / 60);
  return minutes < 60 ? `${minutes} min ${Math.round(value % 60)} s` : `${(value / 3600).toFixed(1)} h`;
}
const plural = (count, word) => `${fmtCount(count)} ${word}${count === 1 ? "" : "s"}`;

/** What each exit status means, for legends and tooltips. */
const STATUS_HELP = {
  Submitted: "The agent ran the submit command; its output is the submitted patch.",
  LimitsExceeded: "Stopped at the step limit or the cost limit.",
  TimeExceeded: "Stopped at the wall-time limit.",
  RepeatedFormatError: "Stopped after too many replies in a row that did not hold exactly one command.",
  UserInterruption: "Stopped by the user (Ctrl-C).",
  Interrupted: "Stopped by a signal.",
  running: "Still running when this page was written: shows the steps so far.",
  unknown: "The trajectory records no exit status.",
};

function statusKind(status) {
  if (status === "Submitted") return "ok";
  if (status === "LimitsExceeded" || status === "TimeExceeded" || status === "RepeatedFormatError")
    return "limit";
  if (status === "UserInterruption" || status === "Interrupted") return "stopped";
  if (status === "running") return "running";
  if (!status || status === "unknown") return "unknown";
  return "error";
}

function statusHelp(status) {
  return STATUS_HELP[status || "unknown"] || `The run ended with an error: ${status}.`;
}

function statusBadge(status) {
  const label = status || "unknown";
  return h("span", { class: `badge status-${statusKind(label)}`, title: statusHelp(label) }, label);
}

/** The verdict's badge; `reason` (the row's `verdict`) names an empty patch, a patch that did not apply, a grading error. */
function verdictBadge(resolved, reason) {
  if (resolved === true)
    return h("span", { class: "badge verdict-yes", title: "The evaluation's tests pass" }, "✓ resolved");
  if (resolved === false && reason === "empty_patch")
    return h(
      "span",
      {
        class: "badge verdict-no",
        title: "The submission was empty: graded unresolved without running the tests",
      },
      "✗ empty patch",
    );
  if (resolved === false && reason === "patch_failed")
    return h("span", { class: "badge verdict-no", title: "The patch did not apply" }, "✗ patch failed");
  if (resolved === false)
    return h(
      "span",
      { class: "badge verdict-no", title: "The evaluation's tests do not all pass" },
      "✗ unresolved",
    );
  if (reason === "error")
    return h("span", { class: "badge verdict-none", title: "Grading failed: no verdict" }, "grading error");
  return h(
    "span",
    { class: "badge verdict-none", title: "No evaluation report for this instance" },
    "not evaluated",
  );
}

/** The packed detail records, unpacked once each (gzip via DecompressionStream, then JSON). */
const detailCache = new Map();
function loadDetail(run, index) {
  const key = `${run}-${index}`;
  if (!detailCache.has(key)) {
    const element = document.getElementById(`d-${key}`);
    detailCache.set(key, element ? inflate(element.textContent) : Promise.resolve(null));
  }
  return detailCache.get(key);
}

async function inflate(base64) {
  const binary = atob(base64.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function runLabel(index) {
  return COMPARE ? (index === 0 ? "A" : "B") : "";
}
