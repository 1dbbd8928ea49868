// The legend under one run's instance table: what each exit status, verdict and the problems column mean.
import type { ViewRun } from "../model.js";
import { h, statusBadge, statusHelp, verdictBadge } from "./dom.js";

/** The exit statuses (the usual ones and any other the run has), the verdicts and the problems column. */
export function legend(run: ViewRun): HTMLElement {
  const present = new Set(run.rows.map((row) => row.exit_status || "unknown"));
  const known = [
    "Submitted",
    "LimitsExceeded",
    "TimeExceeded",
    "RepeatedFormatError",
    "UserInterruption",
    "running",
  ];
  const statuses = [...new Set([...known, ...present])];
  return h(
    "section",
    { class: "legend", id: "legend" },
    h("h3", null, "What the columns mean"),
    h(
      "dl",
      null,
      statuses.map((status) => [h("dt", null, statusBadge(status)), h("dd", null, statusHelp(status))]),
      [true, false, null].map((resolved: boolean | null) => [
        h("dt", null, verdictBadge(resolved)),
        h(
          "dd",
          null,
          resolved === true
            ? "The SWE-bench evaluation ran the instance's tests on the patch and they pass."
            : resolved === false
              ? "The evaluation ran and some required tests fail (or the patch did not apply)."
              : "No evaluation report was found for this instance (run an evaluation to get one).",
        ),
      ]),
      [
        h("dt", null, "Problems"),
        h("dd", null, "Replies the agent could not run (format errors) and commands that ran out of time."),
      ],
    ),
  );
}
