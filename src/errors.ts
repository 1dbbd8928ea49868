import type { ExitMessage, Message } from "./messages.js";

/**
 * Interrupts the agent's step and carries the messages to append, as in mini-swe-agent.
 * Subclasses whose messages end with a `role: "exit"` message end the run.
 */
export class InterruptAgentFlow extends Error {
  readonly messages: Message[];
  constructor(...messages: Message[]) {
    super(typeof messages[0]?.content === "string" ? messages[0].content : "");
    this.name = new.target.name;
    this.messages = messages;
  }
}

export class Submitted extends InterruptAgentFlow {}
export class LimitsExceeded extends InterruptAgentFlow {}
export class TimeExceeded extends LimitsExceeded {}
export class UserInterruption extends InterruptAgentFlow {}
/** The model's output could not be turned into actions; carries the recorded response and the feedback. */
export class FormatError extends InterruptAgentFlow {}

/** A user error at the edge (bad config, bad flag, bad file); the CLI prints the one-line message, exit code 2. */
export class UserError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** `run.env_startup_command` exited non-zero: the run ends before the agent starts (exit status StartupCommandFailed). */
export class StartupCommandFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The trajectory's output path cannot be written (checked before the run starts). */
export class OutputPathError extends UserError {}

export function exitMessage(
  exitStatus: string,
  submission = "",
  content = submission || exitStatus,
): ExitMessage {
  return { role: "exit", content, extra: { exit_status: exitStatus, submission } };
}

/**
 * The exit code of a command whose run ended with `error` (none: 0, whatever the exit status): 2 for bad
 * input (a UserError, which includes refused and exhausted model requests, or a template error), 1 for
 * anything else. The CLI exits with it; trajectories record it (`exit_code` of an error's exit message).
 */
export function exitCodeOf(error: unknown): number {
  if (error === undefined) return 0;
  const badInput = error instanceof UserError || (error instanceof Error && error.name === "TemplateError");
  return badInput ? 2 : 1;
}

/** The exit message recording an uncaught error: its class name as exit status, its message and stack. */
export function errorExitMessage(error: unknown): ExitMessage {
  const name = error instanceof Error ? error.constructor.name : "Error";
  const text = error instanceof Error ? error.message : String(error);
  return {
    role: "exit",
    content: text,
    extra: {
      exit_status: name,
      submission: "",
      exception_str: text,
      traceback: error instanceof Error ? (error.stack ?? text) : text,
      exit_code: exitCodeOf(error),
      // Failed attempts of a model call that never got a reply (ModelRetriesExhaustedError carries them).
      ...(Array.isArray((error as { retries?: unknown } | null)?.retries)
        ? { retries: (error as { retries: unknown[] }).retries }
        : {}),
    },
  };
}
