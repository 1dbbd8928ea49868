// One instance: problem statement, a chart of cumulative cost and prompt tokens, the steps, the submission
// as a diff and the evaluation verdict. In compare mode, both runs' instances next to each other.
import type { CallView, InstanceDetail, InstanceRow, StepView, VerdictView, ViewRun } from "../model.js";
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
  SVG_NS,
  statusBadge,
  statusHelp,
  statusKind,
  svg,
  verdictBadge,
} from "./dom.js";
import { goToStep, moveInstance } from "./navigation.js";
import { overview } from "./overview.js";

/** One run's side of an instance: its row and detail record, when the run has them. */
interface Side {
  run: ViewRun;
  runIndex: number;
  row: InstanceRow | undefined;
  detail: InstanceDetail | null;
}

/** Outputs longer than this many lines (or characters) show their start and a button for the rest. */
const PREVIEW_LINES = 20;
const PREVIEW_CHARS = 2000;

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

function chart(steps: StepView[]): HTMLElement {
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

function steps(detail: InstanceDetail): HTMLElement {
  const list = h("div", { class: "steps" });
  for (const step of detail.steps) list.append(stepCard(step));
  list.append(exitCard(detail));
  return list;
}

/** A step: its header (badges, model time, tokens, cost), then retries, reasoning, text, format error, commands. */
function stepCard(step: StepView): HTMLElement {
  const meta = [
    step.duration_s !== null ? `model ${fmtSeconds(step.duration_s)}` : null,
    step.prompt_tokens !== null ? `${fmtCount(step.prompt_tokens)} prompt tokens` : null,
    step.cost !== null ? fmtMoney(step.cost) : null,
  ].filter(Boolean);
  return h(
    "article",
    {
      class: `step${step.format_error ? " has-error" : ""}`,
      id: `step-${step.n}`,
      "data-step": step.n,
      tabindex: -1,
    },
    h(
      "header",
      null,
      h("h4", null, `Step ${step.n}`),
      stepBadges(step),
      h("span", { class: "meta" }, meta.join(" · ")),
    ),
    retriesList(step),
    step.reasoning
      ? h(
          "details",
          { class: "reasoning" },
          h("summary", null, `Reasoning (${fmtCount(step.reasoning.length)} characters)`),
          h("pre", null, step.reasoning),
        )
      : null,
    step.text !== null && step.text !== ""
      ? h(
          "div",
          { class: "block" },
          h("div", { class: "label" }, "Model"),
          h("pre", { class: "text" }, step.text),
        )
      : null,
    formatErrorBlock(step),
    step.calls.map(callBlock),
  );
}

/** A step's badges: format error, retries, a reply cut at the token limit, commands that timed out. */
function stepBadges(step: StepView): HTMLElement[] {
  const badges: HTMLElement[] = [];
  if (step.format_error)
    badges.push(
      h(
        "span",
        {
          class: "badge status-limit",
          title: "The reply could not be run: it did not hold exactly one command",
        },
        "format error",
      ),
    );
  if (step.retries.length)
    badges.push(
      h(
        "span",
        { class: "badge status-stopped", title: step.retries.map((r) => r.error).join("\n") },
        `retried ${step.retries.length}×`,
      ),
    );
  if (step.finish_reason === "length")
    badges.push(
      h(
        "span",
        { class: "badge status-limit", title: "The reply stopped at the output token limit" },
        "cut off",
      ),
    );
  for (const call of step.calls)
    if (call.timed_out)
      badges.push(
        h("span", { class: "badge status-error", title: "The command ran out of time" }, "timeout"),
      );
  return badges;
}

/** The failed attempts before the step's reply (none: nothing). */
function retriesList(step: StepView): HTMLElement | null {
  if (!step.retries.length) return null;
  return h(
    "ul",
    { class: "retries" },
    step.retries.map((r) =>
      h(
        "li",
        null,
        `Retried after: ${r.error}`,
        r.duration_s !== null ? ` (${fmtSeconds(r.duration_s)})` : "",
      ),
    ),
  );
}

/** The step's format error, with the feedback the model was sent when it says more (none: nothing). */
function formatErrorBlock(step: StepView): HTMLElement | null {
  if (!step.format_error) return null;
  return h(
    "div",
    { class: "format-error" },
    h("strong", null, "Format error: "),
    step.format_error,
    step.format_feedback && step.format_feedback !== step.format_error
      ? h(
          "details",
          null,
          h("summary", null, "Feedback sent to the model"),
          h("pre", null, step.format_feedback),
        )
      : null,
  );
}

function callBlock(call: CallView): HTMLElement {
  const code = call.returncode;
  const meta = [
    h(
      "span",
      { class: `badge ${code === 0 ? "code-ok" : "code-bad"}`, title: "The command's exit code" },
      code === null ? "exit code not recorded" : `exit code ${code}`,
    ),
    call.duration_s !== null ? ` ${fmtSeconds(call.duration_s)}` : "",
    call.timed_out ? h("span", { class: "badge status-error" }, "timed out") : null,
    call.env_truncated
      ? h(
          "span",
          {
            class: "badge status-limit",
            title: "The environment kept the start and end of the output and dropped the middle",
          },
          `middle dropped: ${call.env_truncated}`,
        )
      : null,
  ];
  return h(
    "div",
    { class: "call" },
    h("div", { class: "label" }, "Command"),
    h("pre", { class: "command" }, call.command),
    h("div", { class: "call-meta" }, meta),
    call.exception_info ? h("pre", { class: "exception" }, call.exception_info) : null,
    outputBlock(call),
  );
}

function outputBlock(call: CallView): HTMLElement {
  if (!call.output) return h("div", { class: "output empty" }, "(no output)");
  const pre = h("pre", { class: "output-text" });
  const lines = call.output.split("\n");
  const long = lines.length > PREVIEW_LINES + 5 || call.output.length > PREVIEW_CHARS * 1.5;
  const full = (): Array<string | Node> => {
    if (!call.cut) return [call.output];
    return [
      call.output.slice(0, call.cut_at),
      h(
        "span",
        { class: "cut" },
        `\n[… ${fmtCount(call.cut)} characters left out of this page; the trajectory file has them all …]\n`,
      ),
      call.output.slice(call.cut_at),
    ];
  };
  if (!long) {
    pre.append(...full());
    return h("div", { class: "output" }, h("div", { class: "label" }, "Output"), pre);
  }
  let preview = lines.slice(0, PREVIEW_LINES).join("\n");
  if (preview.length > PREVIEW_CHARS) preview = preview.slice(0, PREVIEW_CHARS);
  pre.append(preview);
  const total = `${plural(lines.length, "line")}, ${plural(call.output_chars, "character")}`;
  const toggle = h(
    "button",
    { type: "button", class: "expand", title: "Show the whole output" },
    `Show all (${total})`,
  );
  let open = false;
  toggle.addEventListener("click", () => {
    open = !open;
    pre.replaceChildren(...(open ? full() : [preview]));
    toggle.textContent = open ? "Show less" : `Show all (${total})`;
  });
  return h(
    "div",
    { class: "output collapsed" },
    h(
      "div",
      { class: "label" },
      "Output ",
      h("span", { class: "hint" }, `(first ${PREVIEW_LINES} lines of ${total})`),
    ),
    pre,
    toggle,
  );
}

function exitCard(detail: InstanceDetail): HTMLElement {
  const status = detail.exit_status || (detail.steps.length ? "running" : "unknown");
  return h(
    "article",
    { class: `step exit status-${statusKind(status)}`, "data-step": "exit" },
    h("header", null, h("h4", null, "Run ended"), statusBadge(status)),
    h("p", null, statusHelp(status)),
    detail.error_message ? h("pre", { class: "exception" }, detail.error_message) : null,
  );
}

function renderDiff(text: string): HTMLElement {
  const wrap = h("div", { class: "diff" });
  let pre: HTMLElement | null = null;
  const start = (name: string): HTMLElement => {
    const made = h("pre");
    wrap.append(h("div", { class: "diff-file" }, h("div", { class: "diff-name" }, name), made));
    return made;
  };
  for (const line of text.replace(/\n$/, "").split("\n")) {
    const git = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
    if (git) {
      pre = start(git[2] ?? "");
      continue;
    }
    pre ??= start("patch");
    let cls = "ctx";
    if (/^(\+\+\+|---|index |new file|deleted file|similarity|rename |old mode|new mode)/.test(line))
      cls = "meta";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    pre.append(h("span", { class: `line ${cls}` }, `${line}\n`));
  }
  return wrap;
}

function verdictView(verdict: VerdictView | null): HTMLElement {
  if (!verdict)
    return h(
      "p",
      { class: "hint" },
      "Not evaluated: no evaluation report (eval/…/<instance>/report.json) was found.",
    );
  const groups = Object.entries(verdict.tests);
  return h(
    "div",
    { class: "verdict" },
    h(
      "p",
      null,
      verdictBadge(verdict.resolved),
      " ",
      verdict.language || verdict.log_parser
        ? h(
            "span",
            { class: "lang", title: "The instance's language and the log parser that read its tests" },
            [verdict.language, verdict.log_parser].filter(Boolean).join(" · "),
          )
        : null,
      " ",
      h("span", { class: "hint" }, `from ${verdict.report_path}`),
    ),
    groups.length
      ? h(
          "table",
          { class: "tests" },
          h(
            "thead",
            null,
            h("tr", null, h("th", null, "Tests"), h("th", null, "Passed"), h("th", null, "Failed")),
          ),
          h(
            "tbody",
            null,
            groups.map(([kind, group]) =>
              h(
                "tr",
                { "data-kind": kind },
                h("th", { title: testHelp(kind) }, kind),
                h("td", null, testList(group.success, "pass")),
                h("td", null, testList(group.failure, "fail")),
              ),
            ),
          ),
        )
      : null,
    verdict.log_lines.length
      ? h(
          "details",
          { class: "log", open: !verdict.resolved },
          h("summary", null, `Relevant lines of the test log (${verdict.log_path})`),
          h("pre", null, verdict.log_lines.join("\n")),
        )
      : null,
  );
}

function testHelp(kind: string): string {
  if (kind === "FAIL_TO_PASS") return "Tests that failed before the fix and must pass with it";
  if (kind === "PASS_TO_PASS") return "Tests that passed before and must still pass";
  return kind;
}

function testList(names: string[], cls: string): HTMLElement {
  if (!names.length) return h("span", { class: "hint" }, "none");
  const shown = names.slice(0, 50);
  return h(
    "ul",
    { class: `test-list ${cls}` },
    shown.map((name) => h("li", null, name)),
    names.length > 50 ? h("li", { class: "hint" }, `… and ${names.length - 50} more`) : null,
  );
}
