/** One bash command the model asked to run. `tool_call_id` links it to a tool call, when there is one. */
export interface Action {
  command: string;
  tool_call_id?: string;
}

/** swerun/mini-swe-agent metadata kept on a message under `extra`; never sent to the model. */
export interface MessageExtra {
  actions?: Action[];
  cost?: number;
  timestamp?: number;
  [key: string]: unknown;
}

/** A chat message in the OpenAI shape, plus `extra`. Providers may add fields (`tool_calls`, `reasoning_content`, ...). */
export interface Message {
  role: "system" | "user" | "assistant" | "tool" | "exit";
  content: unknown;
  extra?: MessageExtra;
  tool_call_id?: string;
  tool_calls?: unknown[];
  [key: string]: unknown;
}

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
