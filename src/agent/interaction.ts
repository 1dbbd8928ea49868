import type { Action, Message } from "../messages.js";

/** How a person takes part in a run (confirm and human modes, Ctrl-C). Absent: yolo, nobody asked. */
export interface Interaction {
  /** Before a model's actions run: null runs them, a string rejects them with that reason. */
  confirmActions(actions: Action[]): Promise<string | null>;
  /** After Ctrl-C stopped a step: a message for the model ("" for none). Throws UserInterruption to end the run. */
  onInterrupt(): Promise<string>;
  /** The agent wants to finish: null lets it, a string goes back to the model and the run goes on. */
  confirmExit(exit: Message): Promise<string | null>;
}

/** Rejected actions still need an answer per tool call (OpenAI requires one); text actions get one user message. */
export function rejectionMessages(actions: Action[], content: string): Message[] {
  const withIds = actions.filter((action) => action.tool_call_id);
  if (withIds.length === 0) return [{ role: "user", content, extra: { interrupt_type: "UserRejection" } }];
  return withIds.map((action) => ({
    role: "tool",
    tool_call_id: action.tool_call_id,
    content,
    extra: { interrupt_type: "UserRejection" },
  }));
}
