// The chart of an instance's cumulative cost and prompt tokens, step by step.
import type { StepView } from "../model.js";
import { fmtCount, fmtMoney, h, plural, SVG_NS, svg } from "./dom.js";
import { goToStep } from "./navigation.js";

/** Cumulative cost and prompt tokens per step, each scaled to its maximum; a point leads to its step. */
export function chart(steps: StepView[]): HTMLElement {
  let cost = 0;
  let tokens = 0;
  const points = steps.map((step) => {
    cost += step.cost || 0;
    tokens += step.prompt_tokens || 0;
    return { n: step.n, cost, tokens };
  });
  if (points.length === 0 || (cost === 0 && tokens === 0))
    return h("p", { class: "hint" }, "This trajectory records no cost or token counts.");
  const width = 600;
  const height = 120;
  const pad = 6;
  const x = (i: number) => pad + (points.length === 1 ? 0 : (i * (width - 2 * pad)) / (points.length - 1));
  const y = (value: number, max: number) => height - pad - (max > 0 ? (value * (height - 2 * pad)) / max : 0);
  const line = (pick: (point: (typeof points)[number]) => number, max: number, cls: string) =>
    svg("polyline", {
      class: cls,
      points: points.map((p, i) => `${x(i).toFixed(1)},${y(pick(p), max).toFixed(1)}`).join(" "),
    });
  const dots = points.map((p, i) =>
    svg(
      "circle",
      {
        cx: x(i).toFixed(1),
        cy: y(p.tokens, tokens).toFixed(1),
        r: 3,
        class: "dot",
        "data-step": p.n,
        onclick: () => goToStep(p.n),
      },
      titleNode(`step ${p.n}: ${fmtMoney(p.cost)} so far, ${fmtCount(p.tokens)} prompt tokens so far`),
    ),
  );
  return h(
    "figure",
    { class: "chart" },
    svg(
      "svg",
      {
        viewBox: `0 0 ${width} ${height}`,
        role: "img",
        "aria-label": "Cumulative cost and prompt tokens per step",
      },
      svg("line", { x1: pad, y1: height - pad, x2: width - pad, y2: height - pad, class: "axis" }),
      line((p) => p.cost, cost, "cost"),
      line((p) => p.tokens, tokens, "tokens"),
      dots,
    ),
    h(
      "figcaption",
      null,
      h("span", { class: "key cost" }, "━"),
      ` cumulative cost (up to ${fmtMoney(cost)})   `,
      h("span", { class: "key tokens" }, "━"),
      ` cumulative prompt tokens (up to ${fmtCount(tokens)}), over ${plural(points.length, "step")}; each scaled to its own maximum. Click a point to go to its step.`,
    ),
  );
}

function titleNode(text: string): SVGElement {
  const node = document.createElementNS(SVG_NS, "title");
  node.textContent = text;
  return node;
}
