// The conversation: messages as mini-swe-agent records them, a union by role. Each has its known fields typed;
// the keys providers and mini-swe-agent add (`reasoning_content`, `thinking_blocks`, a Responses API reply's
// `output`, ...) stay as they came, so a message read from a trajectory round-trips unchanged.

/** One bash command the model asked to run. `tool_call_id` links it to a tool call, when there is one. */
export interface Action {
  command: string;
  tool_call_id?: string;
}

/** One part of a list content: `{type: "text", text}`, `{type: "image_url", image_url}`, `{type: "input_text", text}`, ... */
export interface ContentPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

/** A message's content: text, a list of parts (multimodal, typed Responses API input), or null (tool calls only). */
export type MessageContent = string | ContentPart[] | null;

/** A tool call of an assistant message, in the chat-completions shape. */
export interface ToolCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** What a model call records in `extra`, beside the provider's message (mini-swe-agent's keys, swerun's timings). */
export interface CallExtra {
  /** The provider's raw response, as mini-swe-agent records it. */
  response?: unknown;
  /** Dollars the call cost. */
  cost?: number;
  /** When the reply arrived (Unix seconds). */
  timestamp?: number;
  /** How long the call took, retries included (swerun). */
  duration_s?: number;
  /** The call's token counts as the provider reported them (litellm's `usage`), when recorded apart from `response`. */
  usage?: unknown;
  /** Failed attempts before this reply (swerun; see `RetryRecord` in models/retrying-request). */
  retries?: unknown[];
  [key: string]: unknown;
}

/** `extra` of the model's reply: the call's record and the commands parsed from it. */
export interface AssistantExtra extends CallExtra {
  /** The commands to run (none or absent: the reply ran nothing). */
  actions?: Action[];
}

/** `extra` of an observation: what running one action produced, as mini-swe-agent records it. */
export interface ObservationExtra {
  raw_output: string;
  returncode: number;
  /** When the observation was made (Unix seconds). */
  timestamp: number;
  exception_info: string;
  /** How long the command ran (swerun). */
  duration_s?: number;
  /** `TimeoutExpired` or `ExecutionError` when the command did not finish normally. */
  exception_type?: string;
  exception?: string;
  /** An observation is not an interruption; this lets a reader tell the two apart by `interrupt_type`. */
  interrupt_type?: undefined;
  [key: string]: unknown;
}

/**
 * `extra` of a format error's feedback: mini-swe-agent records no message for a reply that could not be run;
 * its feedback carries the paid call's `extra` (cost, response, timestamp, ...) instead.
 */
export interface FormatErrorExtra extends CallExtra {
  interrupt_type: "FormatError";
  /** The text of a reply whose actions could not be parsed. */
  model_response?: string;
  n_actions?: number;
}

/** `extra` of a message a person added: a rejection of the model's commands, a note after Ctrl-C, a new task. */
export interface InterruptExtra {
  interrupt_type: "UserRejection" | "UserInterruption" | "UserNewTask";
  [key: string]: unknown;
}

/** The command that submitted, measured; it ran, but mini-swe-agent records no observation for it (swerun). */
export interface SubmitAction {
  command: string;
  returncode: number;
  duration_s: number | null;
  /** When it ended (Unix seconds). */
  timestamp: number;
}

/** `extra` of the exit message: how the run ended. */
export interface ExitExtra {
  /** `Submitted`, `LimitsExceeded`, `TimeExceeded`, `RepeatedFormatError`, `UserInterruption`, an error's class, ... */
  exit_status: string;
  /** The submitted text ("" unless `Submitted`). */
  submission: string;
  /** An uncaught error's message, traceback and the command's exit code (see `errorExitMessage`). */
  exception_str?: string;
  traceback?: string;
  exit_code?: number;
  /** Failed attempts of a model call that never got a reply. */
  retries?: unknown[];
  submit_action?: SubmitAction;
  [key: string]: unknown;
}

export interface SystemMessage {
  role: "system";
  content: MessageContent;
  extra?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The task, an observation of a text-based model, a format error's feedback, or a person's message. */
export interface UserMessage {
  role: "user";
  content: MessageContent;
  extra?: ObservationExtra | FormatErrorExtra | InterruptExtra;
  [key: string]: unknown;
}

/** The model's reply. A Responses API reply is the response object itself (its `output`, no `content`). */
export interface AssistantMessage {
  role: "assistant";
  content?: MessageContent;
  tool_calls?: ToolCall[];
  extra?: AssistantExtra;
  [key: string]: unknown;
}

/** The answer to one tool call (a Responses API `function_call_output` has `call_id` and `output` instead). */
export interface ToolMessage {
  role: "tool";
  content?: MessageContent;
  tool_call_id?: string;
  extra?: ObservationExtra | InterruptExtra;
  [key: string]: unknown;
}

/** The last message of a finished run (mini-swe-agent's `role: "exit"`); the model formats an error's exit as it formats a prompt. */
export interface ExitMessage {
  role: "exit";
  content: MessageContent;
  extra: ExitExtra;
  [key: string]: unknown;
}

/** What running an action produced, as the model is shown it: a user message, or a tool message answering a tool call. */
export type ObservationMessage = (UserMessage | ToolMessage) & { extra: ObservationExtra };

/** A message of the conversation, by role. */
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage | ExitMessage;

/** Any message's `extra`. */
export type MessageExtra = NonNullable<Message["extra"]>;

/** What running one action produced. A failed or timed-out command is data, not an exception. */
export interface ExecOutput {
  /** stdout and stderr merged in the order written, decoded as UTF-8 with replacement characters. */
  output: string;
  /** The command's exit code; -1 when it timed out or could not be run. */
  returncode: number;
  /** Why the command did not finish normally (timeout, spawn failure); empty otherwise. */
  exception_info: string;
  /** Extra facts recorded on the observation message (truncation, duration, exception type). */
  extra?: Record<string, unknown>;
}

/** The commands a message asks to run (`extra.actions`; mini-swe-agent reads them whatever the role). */
export function actionsOf(message: Message): Action[] {
  if (message.role === "assistant") return message.extra?.actions ?? [];
  const actions = message.extra?.actions;
  return Array.isArray(actions) ? actions : [];
}

/** How a conversation ended: its exit message's `extra`, when the last message is one. */
export function exitOf(messages: readonly Message[]): ExitExtra | undefined {
  const last = messages.at(-1);
  return last?.role === "exit" ? last.extra : undefined;
}

/** Dollars a message records (`extra.cost`); 0 when none. */
export function messageCost(message: Message): number {
  const cost = message.extra?.cost;
  return typeof cost === "number" && Number.isFinite(cost) ? cost : 0;
}

/** A message content as text: a string as it is, the text parts of a list of parts joined, else empty. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      typeof part === "object" && part !== null ? (part as { text?: unknown }).text : undefined,
    )
    .filter((text): text is string => typeof text === "string")
    .join("");
}
