import { runFactsOf } from "../facts/read-run.js";
import type { RunFacts, ToolCallFacts } from "../facts/run-facts.js";
import type { LoadedTrajectory } from "../trajectory/reader.js";
import type { CallView, InstanceDetail, StepView, VerdictView } from "./model.js";

/** Outputs longer than this are shortened in the page (head and tail kept, the cut marked). */
export const OUTPUT_PAGE_LIMIT = 20_000;
const TAIL_KEPT = 5_000;

/** swerun's environments mark a capped output with this line (src/environments/output.ts). */
const ENV_TRUNCATION = /<swerun: (\d+) bytes of output elided from the middle \((\d+) bytes in all\)>/;

function callView(call: ToolCallFacts): CallView {
  const length = call.output.length;
  const cut = length > OUTPUT_PAGE_LIMIT ? length - OUTPUT_PAGE_LIMIT : 0;
  const headKept = OUTPUT_PAGE_LIMIT - TAIL_KEPT;
  const envCut = ENV_TRUNCATION.exec(call.output);
  return {
    command: call.command,
    returncode: call.returncode,
    output: cut > 0 ? call.output.slice(0, headKept) + call.output.slice(length - TAIL_KEPT) : call.output,
    output_chars: length,
    cut,
    cut_at: cut > 0 ? headKept : 0,
    exception_info: call.exception_info,
    timed_out: call.timed_out,
    duration_s: call.duration_s,
    env_truncated: envCut ? `${envCut[1]} of ${envCut[2]} bytes` : null,
  };
}

/** The detail record of an instance, from its loaded trajectory and its facts. */
export function instanceDetail(
  trajectory: LoadedTrajectory,
  verdict: VerdictView | null,
  facts: RunFacts = runFactsOf(trajectory),
): InstanceDetail {
  const steps: StepView[] = facts.turns.map((turn) => {
    return {
      n: turn.turn,
      text: turn.content,
      reasoning: turn.reasoning,
      finish_reason: turn.finish_reason,
      prompt_tokens: turn.prompt_tokens,
      cost: turn.cost,
      duration_s: turn.duration_s,
      retries: turn.retries,
      format_error: turn.format_error,
      format_feedback: turn.format_feedback,
      calls: turn.tool_calls.map(callView),
    };
  });
  return {
    id: facts.id,
    path: facts.path,
    format: facts.format,
    model: facts.model,
    problem: facts.task ?? facts.prompt,
    exit_status: facts.exit_status,
    error_message: facts.error_message,
    submission: facts.submission,
    steps,
    verdict,
  };
}
