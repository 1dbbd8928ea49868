// The steps of an instance's trajectory, one card each (badges, retries, reasoning, the model's text, its
// format error, each command with its output), and the card of how the run ended.
import type { CallView, InstanceDetail, StepView } from "../model.js";
import { fmtCount, fmtMoney, fmtSeconds, h, plural, statusBadge, statusHelp, statusKind } from "./dom.js";

/** Outputs longer than this many lines (or characters) show their start and a button for the rest. */
const PREVIEW_LINES = 20;
const PREVIEW_CHARS = 2000;

/** The steps of a trajectory, then how it ended. */
export function steps(detail: InstanceDetail): HTMLElement {
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
