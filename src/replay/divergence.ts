import { createTwoFilesPatch } from "diff";
import { SUBMIT_MARKER } from "../agent/submission.js";
import type { ExecOutput, Message } from "../messages.js";
import { normaliseOutput } from "./normalise.js";
import type { RecordedObservation, RecordedStep } from "./recorded.js";

/** How one action's new result compares with the recorded one. */
export type ActionStatus = "exact" | "normalised" | "DIFFERENT";

/** The new result of one action: its output and the observation message the model saw. */
export interface ReplayedObservation {
  returncode: number;
  output: string;
  exception_info: string;
  /** The rendered observation message (compared when only that is recorded). */
  content: string;
}

export interface ActionComparison {
  command: string;
  status: ActionStatus;
  /** null: the action did not run (in the recorded run or in the replay). */
  recorded: RecordedObservation | null;
  replayed: ReplayedObservation | null;
}

/** One step of the divergence report. Steps that ran nothing (format errors, rejections) have no actions. */
export interface StepComparison {
  step: number;
  kind: RecordedStep["kind"];
  /** The worst status of its actions; "replayed" when the step ran nothing and was added as recorded. */
  status: ActionStatus | "replayed";
  actions: ActionComparison[];
}

export interface SubmissionComparison {
  /** not_recorded: the trajectory records no submission, so there is nothing to compare (not a divergence). */
  status: "same" | "different" | "not_recorded";
  recorded: string | null;
  replayed: string;
  /** Unified diff from the recorded to the replayed submission; empty when they are the same. */
  diff: string;
}

const RANK: Record<ActionStatus, number> = { exact: 0, normalised: 1, DIFFERENT: 2 };

/** Compares one action: exit code and output, exactly, then after normalising volatile parts. */
export function compareObservation(
  recorded: RecordedObservation | null,
  replayed: ReplayedObservation | null,
  cwd: { recorded?: string; replayed?: string } = {},
): ActionStatus {
  if (!recorded || !replayed) return recorded === replayed ? "exact" : "DIFFERENT";
  if (recorded.returncode !== null && recorded.returncode !== replayed.returncode) return "DIFFERENT";
  const before = recorded.output;
  const after = recorded.rendered ? replayed.content : replayed.output;
  const afterException = recorded.rendered ? "" : replayed.exception_info;
  const beforeException = recorded.rendered ? "" : recorded.exception_info;
  if (before === after && beforeException === afterException) return "exact";
  const same = (a: string, b: string) =>
    normaliseOutput(a, cwd.recorded) === normaliseOutput(b, cwd.replayed);
  return same(before, after) && same(beforeException, afterException) ? "normalised" : "DIFFERENT";
}

/** The new observation of each action of a step, from the outputs and the messages rendered from them. */
export function replayedObservations(outputs: ExecOutput[], messages: Message[]): ReplayedObservation[] {
  return outputs.map((output, index) => {
    const content = messages[index]?.content;
    return {
      returncode: output.returncode,
      output: output.output,
      exception_info: output.exception_info,
      content: typeof content === "string" ? content : "",
    };
  });
}

function isSubmission(recorded: RecordedObservation): boolean {
  const first = recorded.output.trimStart().split("\n", 1)[0]?.trim();
  return (recorded.returncode ?? 0) === 0 && first === SUBMIT_MARKER;
}

/** Compares a recorded step with what its replay printed (`replayed` is empty for steps that ran nothing). */
export function compareStep(
  step: RecordedStep,
  replayed: ReplayedObservation[],
  cwd: { recorded?: string; replayed?: string } = {},
): StepComparison {
  if (step.kind !== "actions") return { step: step.step, kind: step.kind, status: "replayed", actions: [] };
  const actions = step.actions.map((action, index): ActionComparison => {
    const recorded = step.observations[index] ?? null;
    const now = replayed[index] ?? null;
    // An output the recording did not keep cannot differ from it.
    const unrecorded = step.unobserved && !recorded && now;
    // A command that submitted has no observation (as in mini-swe-agent); older recordings kept one.
    const submitted = !now && recorded !== null && isSubmission(recorded);
    return {
      command: action.command,
      status: submitted ? "exact" : unrecorded ? "normalised" : compareObservation(recorded, now, cwd),
      recorded,
      replayed: now,
    };
  });
  const status = actions.reduce<ActionStatus>(
    (worst, a) => (RANK[a.status] > RANK[worst] ? a.status : worst),
    "exact",
  );
  return { step: step.step, kind: step.kind, status, actions };
}

/** Unified diff of two texts, without the `Index:`/`===` header lines. */
export function unifiedDiff(before: string, after: string, from: string, to: string): string {
  const patch = createTwoFilesPatch(from, to, before, after, undefined, undefined, { context: 3 });
  return patch.replace(/^={3,}\n/m, "").trimEnd();
}

export function compareSubmissions(recorded: string | undefined, replayed: string): SubmissionComparison {
  if (recorded === undefined) return { status: "not_recorded", recorded: null, replayed, diff: "" };
  const same = recorded === replayed;
  return {
    status: same ? "same" : "different",
    recorded,
    replayed,
    diff: same ? "" : unifiedDiff(recorded, replayed, "recorded submission", "replayed submission"),
  };
}
