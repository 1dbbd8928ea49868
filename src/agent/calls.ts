// The agent's two calls out, each timed and announced on the bus: a model call and a command.
import type { Environment } from "../environments/environment.js";
import { FormatError, InterruptAgentFlow } from "../errors.js";
import type { EventBus } from "../events.js";
import { type Action, type ExecOutput, type Message, messageCost } from "../messages.js";
import type { Model } from "../models/model.js";
import { monotonicMs } from "../util/clock.js";

/**
 * Model call number `call`, between `model_call_start` and `model_call_end`; the reply (or a format error's
 * paid feedback) records how long the call took (`extra.duration_s`, unless the model set it). `counted` runs
 * before `model_call_end` when the call counts as one (the model was asked, whatever it answered).
 */
export async function callModel(
  model: Model,
  messages: Message[],
  context: { call: number; signal: AbortSignal; bus: EventBus; counted: () => void },
): Promise<Message> {
  const { call, bus } = context;
  const started = monotonicMs();
  bus.emitNow({ type: "model_call_start", call });
  const finish = (message: Message | undefined, replied: boolean) => {
    const duration_s = (monotonicMs() - started) / 1000;
    if (message?.extra && message.extra.duration_s === undefined) message.extra.duration_s = duration_s;
    const cost = message ? messageCost(message) : 0;
    bus.emitNow({ type: "model_call_end", call, replied, duration_s, cost, usage: message?.extra?.usage });
  };
  try {
    const message = await model.query(messages, { signal: context.signal });
    context.counted();
    finish(message, true);
    return message;
  } catch (error) {
    // A stand-in that ends the run instead of answering (replay's end, a human quitting) made no call.
    if (!(error instanceof InterruptAgentFlow) || error instanceof FormatError) context.counted();
    // A reply that could not be run is a reply; so is a recorded reply a replay stands in with.
    const formatError = error instanceof FormatError;
    const replied =
      formatError ||
      (error instanceof InterruptAgentFlow && error.messages.some((m) => m.role === "assistant"));
    finish(formatError ? error.messages[0] : undefined, replied);
    throw error;
  }
}

/** Runs one action of step `step`, between `action_start` and `action_end`; its output records `duration_s`. */
export async function runAction(
  env: Environment,
  action: Action,
  context: { step: number; signal: AbortSignal; bus: EventBus },
): Promise<ExecOutput> {
  const { step, bus } = context;
  bus.emitNow({ type: "action_start", step, action });
  const started = monotonicMs();
  const output = await env.execute(action, { signal: context.signal });
  const duration_s = (monotonicMs() - started) / 1000;
  output.extra = { ...(output.extra ?? {}), duration_s };
  bus.emitNow({
    type: "action_end",
    step,
    action,
    returncode: output.returncode,
    duration_s,
    output_chars: output.output.length,
    output: output.output,
    exception_info: output.exception_info,
  });
  return output;
}
