// Where the reader is: the instance open (from the URL's #<instance id>) and its current step, and moving
// between steps and instances.
import { FIRST_RUN } from "./dom.js";
import { overview } from "./instance-table.js";

/** The open instance (null on the overview), its current step's index, and a step to go to once it loads. */
export const view = {
  current: null as string | null,
  step: 0,
  pendingStep: null as number | null,
  expandOutput: false,
};

/** Opens an instance at a step (from a search hit), expanding the step's outputs when the hit is there. */
export function openStep(id: string, step: number, expand: boolean): void {
  view.pendingStep = step;
  view.expandOutput = expand;
  const hash = `#${encodeURIComponent(id)}`;
  if (location.hash === hash && view.current === id) {
    view.pendingStep = null;
    goToStep(step, expand);
  } else location.hash = hash;
}

function stepNumbers(): string[] {
  const numbers = new Set<string>();
  for (const node of document.querySelectorAll("#instance .step[data-step]"))
    numbers.add(node.getAttribute("data-step") ?? "");
  return [...numbers];
}

export function goToStep(step: number, expand = false): void {
  const numbers = stepNumbers();
  const index = numbers.indexOf(String(step));
  if (index < 0) return;
  view.step = index;
  markStep(expand);
}

function markStep(expand: boolean): void {
  const numbers = stepNumbers();
  const key = numbers[view.step];
  for (const node of document.querySelectorAll("#instance .step.current")) node.classList.remove("current");
  const nodes = document.querySelectorAll<HTMLElement>(`#instance .step[data-step="${key}"]`);
  for (const node of nodes) {
    node.classList.add("current");
    if (expand)
      for (const button of node.querySelectorAll<HTMLButtonElement>("button.expand"))
        if (button.textContent !== "Show less") button.click();
  }
  if (nodes[0]) {
    nodes[0].scrollIntoView({ block: "start" });
    nodes[0].focus({ preventScroll: true });
  }
}

export function moveStep(delta: number): void {
  const count = stepNumbers().length;
  if (count === 0) return;
  const anyCurrent = document.querySelector("#instance .step.current");
  view.step = anyCurrent ? Math.max(0, Math.min(count - 1, view.step + delta)) : delta > 0 ? 0 : count - 1;
  markStep(false);
}

export function moveInstance(delta: number): void {
  const order = overview.order.length ? overview.order : FIRST_RUN.rows.map((row) => row.id);
  if (order.length === 0) return;
  // The hash changes at once and the view when its hashchange arrives: count from the instance last asked
  // for, so that keys pressed quickly in a row each move one instance.
  const asked = location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : null;
  const from = asked !== null && order.includes(asked) ? asked : view.current;
  const at = from === null ? overview.selected - (delta > 0 ? 1 : -1) : order.indexOf(from);
  const next = order[Math.max(0, Math.min(order.length - 1, at + delta))];
  if (next !== undefined) location.hash = `#${encodeURIComponent(next)}`;
}
