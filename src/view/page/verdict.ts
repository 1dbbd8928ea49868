// An instance's evaluation verdict: the tests that passed and failed, and the relevant lines of the test log.
import type { VerdictView } from "../model.js";
import { h, verdictBadge } from "./dom.js";

/** The evaluation verdict (or why there is none), its tests and the relevant lines of its log. */
export function verdictView(verdict: VerdictView | null): HTMLElement {
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
