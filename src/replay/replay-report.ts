import pc from "picocolors";
import type { TrajectoryKind } from "../trajectory/reader.js";
import { writeOutput } from "../util/output-file.js";
import { redact } from "../util/secrets.js";
import {
  type ActionComparison,
  type StepComparison,
  type SubmissionComparison,
  unifiedDiff,
} from "./divergence.js";

/** The `--report` JSON: per step how the replay compared, and the submissions. */
export interface ReplayReport {
  /** The replayed trajectory and its format. */
  trajectory: string;
  trajectory_format: TrajectoryKind;
  /** The replay's own trajectory. */
  output: string;
  recorded_steps: number;
  replayed_steps: number;
  until: number | null;
  continued: boolean;
  counts: { exact: number; normalised: number; different: number; replayed: number };
  divergent_steps: number[];
  steps: StepComparison[];
  exit_status: { recorded: string; replayed: string };
  /** Compared unless the replay stopped early (`--until` without `--continue`). */
  submission: SubmissionComparison | { status: "not_compared"; reason: string };
}

const COLUMNS = { step: 4, result: 10, exit: 7 };
const MAX_COMMAND = 100;
const MAX_DIFF_LINES = 12;

function exitColumn(action: ActionComparison): string {
  const recorded = action.recorded ? (action.recorded.returncode ?? "?") : "-";
  const replayed = action.replayed ? action.replayed.returncode : "-";
  return String(recorded) === String(replayed) ? String(replayed) : `${recorded}→${replayed}`;
}

function firstLine(command: string): string {
  const lines = command.trim().split("\n");
  const line = lines[0] ?? "";
  const cut = line.length > MAX_COMMAND ? `${line.slice(0, MAX_COMMAND - 1)}…` : line;
  return lines.length > 1 ? `${cut} …` : cut;
}

/** The lines of a diff between the recorded and the new output, hunks only, at most a dozen. */
function outputDiff(action: ActionComparison): string[] {
  const before = action.recorded?.output ?? "(did not run)";
  const after = action.replayed
    ? action.recorded?.rendered
      ? action.replayed.content
      : action.replayed.output
    : "(did not run)";
  const lines = unifiedDiff(before, after, "recorded", "replayed")
    .split("\n")
    .filter((line) => !line.startsWith("--- ") && !line.startsWith("+++ ") && !line.startsWith("Index:"));
  if (lines.length <= MAX_DIFF_LINES) return lines;
  return [
    ...lines.slice(0, MAX_DIFF_LINES),
    `… ${lines.length - MAX_DIFF_LINES} more diff lines (see --report)`,
  ];
}

/** Formats the divergence table: a header, then rows for each step as it completes. */
export class ReplayTable {
  readonly #colors: ReturnType<typeof pc.createColors>;

  constructor(color = false) {
    this.#colors = pc.createColors(color);
  }

  header(): string {
    const { step, result, exit } = COLUMNS;
    return this.#colors.bold(
      `${"step".padStart(step)}  ${"result".padEnd(result)}  ${"exit".padEnd(exit)}  command`,
    );
  }

  rows(comparison: StepComparison): string[] {
    const c = this.#colors;
    const step = String(comparison.step).padStart(COLUMNS.step);
    if (comparison.kind !== "actions") {
      const what = comparison.kind === "format_error" ? "format error" : "actions rejected by the user";
      return [
        `${step}  ${c.dim("replayed".padEnd(COLUMNS.result))}  ${"-".padEnd(COLUMNS.exit)}  ${c.dim(`(${what}: added as recorded)`)}`,
      ];
    }
    const color = { exact: c.green, normalised: c.yellow, DIFFERENT: c.red };
    return comparison.actions.flatMap((action, index) => {
      const row = `${index === 0 ? step : " ".repeat(COLUMNS.step)}  ${color[action.status](action.status.padEnd(COLUMNS.result))}  ${exitColumn(action).padEnd(COLUMNS.exit)}  ${firstLine(action.command)}`;
      if (action.status !== "DIFFERENT") return [row];
      return [row, ...outputDiff(action).map((line) => `${" ".repeat(COLUMNS.step)}  ${c.dim("│")} ${line}`)];
    });
  }

  summary(report: ReplayReport): string[] {
    const c = this.#colors;
    const { exact, normalised, different, replayed } = report.counts;
    const first = report.divergent_steps[0];
    const lines = [
      `replayed ${report.replayed_steps} of ${report.recorded_steps} recorded steps: ${exact} exact, ${normalised} normalised, ` +
        (different > 0 ? c.red(`${different} DIFFERENT (first at step ${first})`) : "0 different") +
        (replayed > 0 ? `, ${replayed} added as recorded` : ""),
      `exit status: ${report.exit_status.replayed} (recorded: ${report.exit_status.recorded || "none"})`,
    ];
    const submission = report.submission;
    if (submission.status === "not_compared") lines.push(`submission: not compared (${submission.reason})`);
    else if (submission.status === "same") lines.push(`submission: ${c.green("same")}`);
    else if (submission.status === "not_recorded")
      lines.push("submission: not recorded (the trajectory holds none to compare with)");
    else lines.push(`submission: ${c.red("DIFFERENT")}`, submission.diff);
    return lines;
  }
}

/** Counts and divergent steps of a list of step comparisons. */
export function tally(steps: StepComparison[]): Pick<ReplayReport, "counts" | "divergent_steps"> {
  const counts = { exact: 0, normalised: 0, different: 0, replayed: 0 };
  for (const step of steps) {
    if (step.status === "replayed") counts.replayed += 1;
    else if (step.status === "DIFFERENT") counts.different += 1;
    else counts[step.status] += 1;
  }
  return {
    counts,
    divergent_steps: steps.filter((step) => step.status === "DIFFERENT").map((step) => step.step),
  };
}

/** Writes the report as JSON (`-`: standard output); outputs of exact actions are left out (both trajectories hold them). */
export function writeReport(path: string, report: ReplayReport): void {
  const steps = report.steps.map((step) => ({
    ...step,
    actions: step.actions.map((action) =>
      action.status === "exact"
        ? { command: action.command, status: action.status, returncode: action.replayed?.returncode ?? null }
        : action,
    ),
  }));
  writeOutput(path, [redact(`${JSON.stringify({ ...report, steps }, null, 2)}\n`)]);
}
