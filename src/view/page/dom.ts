// DOM helpers, formatting and the embedded data. Text from trajectories only ever becomes text nodes or
// attribute values (never markup): h() appends strings as text.
import { count, seconds, usd } from "../../facts/figures.js";
import type { InstanceDetail, ViewPage, ViewRun } from "../model.js";

/** An element the page made and needs (a missing one is a bug in the page, not in the data). */
export function byId(id: string): HTMLElement {
  const node = document.getElementById(id);
  if (!node) throw new Error(`swerun view: no element #${id}`);
  return node;
}

export const DATA: ViewPage = JSON.parse(byId("swerun-view-data").textContent ?? "null");
export const COMPARE = DATA.mode === "compare";
/** The first run (the only one outside compare mode); a page always has one. */
export const FIRST_RUN = DATA.runs[0] as ViewRun;
export const SVG_NS = "http://www.w3.org/2000/svg";

/** What h() and svg() append: nodes, text (numbers too), nothing (null, undefined, false), or lists of them. */
export type Child = Node | string | number | boolean | null | undefined | Child[];
/** Attributes: `class`, `text`, `on<event>` (a listener), others set as attributes unless null, undefined or false. */
export type Attrs = Record<string, unknown> | null;

/** An element with attributes (`class`, `text`, `on<event>`, others as attributes) and children. */
export function h(tag: string, attrs?: Attrs, ...children: Child[]): HTMLElement {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

/** Appends children, lists flattened; null, undefined and false are left out, other values become text. */
function append(node: Element, children: Child[]): void {
  for (const child of children) {
    if (Array.isArray(child)) append(node, child);
    else if (child !== null && child !== undefined && child !== false)
      node.append(child instanceof Node ? child : String(child));
  }
}

export function svg(tag: string, attrs?: Attrs, ...children: Child[]): SVGElement {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

function setAttrs(node: Element, attrs: Attrs | undefined): void {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.setAttribute("class", String(value));
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value as EventListener);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
}

export const fmtCount = (value: number | null | undefined) =>
  value === null || value === undefined ? "—" : count(value);
export function fmtMoney(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : usd(value);
}
export function fmtSeconds(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : seconds(value);
}
export const plural = (count: number, word: string) => `${fmtCount(count)} ${word}${count === 1 ? "" : "s"}`;

/** What each exit status means, for legends and tooltips. */
const STATUS_HELP: Record<string, string> = {
  Submitted: "The agent ran the submit command; its output is the submitted patch.",
  LimitsExceeded: "Stopped at the step limit or the cost limit.",
  TimeExceeded: "Stopped at the wall-time limit.",
  RepeatedFormatError: "Stopped after too many replies in a row that did not hold exactly one command.",
  UserInterruption: "Stopped by the user (Ctrl-C).",
  Interrupted: "Stopped by a signal.",
  running: "Still running when this page was written: shows the steps so far.",
  unknown: "The trajectory records no exit status.",
};

export function statusKind(status: string | null | undefined): string {
  if (status === "Submitted") return "ok";
  if (status === "LimitsExceeded" || status === "TimeExceeded" || status === "RepeatedFormatError")
    return "limit";
  if (status === "UserInterruption" || status === "Interrupted") return "stopped";
  if (status === "running") return "running";
  if (!status || status === "unknown") return "unknown";
  return "error";
}

export function statusHelp(status: string | null | undefined): string {
  return STATUS_HELP[status || "unknown"] || `The run ended with an error: ${status}.`;
}

export function statusBadge(status: string | null | undefined): HTMLElement {
  const label = status || "unknown";
  return h("span", { class: `badge status-${statusKind(label)}`, title: statusHelp(label) }, label);
}

/** The verdict's badge; `reason` (the row's `verdict`) names an empty patch, a patch that did not apply, a grading error. */
export function verdictBadge(resolved: boolean | null, reason?: string): HTMLElement {
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
const detailCache = new Map<string, Promise<InstanceDetail | null>>();
export function loadDetail(run: number, index: number): Promise<InstanceDetail | null> {
  const key = `${run}-${index}`;
  let detail = detailCache.get(key);
  if (!detail) {
    const element = document.getElementById(`d-${key}`);
    detail = element ? inflate(element.textContent ?? "") : Promise.resolve(null);
    detailCache.set(key, detail);
  }
  return detail;
}

async function inflate(base64: string): Promise<InstanceDetail> {
  const binary = atob(base64.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

export function runLabel(index: number): string {
  return COMPARE ? (index === 0 ? "A" : "B") : "";
}
