import type { Action, Message } from "./messages.js";

/** What the agent loop reports while it runs. Subscribers (trajectory writer, console, progress, event log) read these. */
export type AgentEvent =
  | { type: "run_start"; task: string; time: number }
  /**
   * The agent loop starts (after `run` rendered the first messages, or after `restore`): its model, its
   * working directory, its system prompt and how many messages it holds.
   */
  | {
      type: "agent_start";
      model: string;
      cwd: string;
      system_prompt: string;
      messages: number;
      time: number;
    }
  | { type: "message"; message: Message; time: number }
  | { type: "model_call_start"; call: number; time: number }
  | {
      type: "model_call_end";
      call: number;
      /** The call returned a reply (a step, a reply that could not be run included); false when it failed or was cut short. */
      replied: boolean;
      duration_s: number;
      cost: number;
      /** The reply's `extra.usage`, as the provider reported it. */
      usage?: unknown;
      time: number;
    }
  /**
   * A model request failed and is tried again after `delay_s`: `attempt` is the attempt that failed (from
   * 1), `max_retries` the attempts allowed in all, `error_class` the failure's class (e.g. `InternalServerError`).
   */
  | {
      type: "model_retry";
      attempt: number;
      max_retries: number;
      error_class: string;
      error: string;
      delay_s: number;
      time: number;
    }
  /** Every attempt of a model request failed; the run ends with ModelRetriesExhaustedError. */
  | { type: "model_retry_exhausted"; attempts: number; error_class: string; error: string; time: number }
  /** An HTTP request to the model's API is about to be sent (models that speak HTTP only): its JSON body. */
  | { type: "model_request"; attempt: number; provider: string; body: Record<string, unknown>; time: number }
  /** The API answered a request with a parsed response body, after `duration_s` (request to response). */
  | {
      type: "model_response";
      attempt: number;
      provider: string;
      body: Record<string, unknown>;
      duration_s: number;
      time: number;
    }
  | { type: "action_start"; step: number; action: Action; time: number }
  | {
      type: "action_end";
      step: number;
      action: Action;
      returncode: number;
      duration_s: number;
      output_chars: number;
      /** The command's output as the model sees it before templating (stdout and stderr merged). */
      output: string;
      exception_info: string;
      time: number;
    }
  | { type: "format_error"; consecutive: number; content: string; time: number }
  | { type: "limit_reached"; exit_status: string; time: number }
  | { type: "saved"; path: string; time: number }
  | {
      type: "run_end";
      exit_status: string;
      submission: string;
      cost: number;
      api_calls: number;
      time: number;
    };

export type AgentEventType = AgentEvent["type"];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event without its time: `EventBus.emitNow` stamps it. */
export type EventInput = DistributiveOmit<AgentEvent, "time">;

/**
 * A subscriber to agent events. It must not throw: a subscriber that throws is reported once on stderr
 * and then ignored, so a display bug never ends a run.
 */
export type AgentListener = (event: AgentEvent) => void;

/** Distributes events to subscribers in the order they subscribed. */
export class EventBus {
  readonly #listeners: AgentListener[] = [];
  readonly #broken = new Set<AgentListener>();

  subscribe(listener: AgentListener): () => void {
    this.#listeners.push(listener);
    return () => {
      const index = this.#listeners.indexOf(listener);
      if (index >= 0) this.#listeners.splice(index, 1);
    };
  }

  /** Emits `event` stamped with the current time (seconds since the epoch, as in trajectories). */
  emitNow(event: EventInput): void {
    this.emit({ ...event, time: Date.now() / 1000 } as AgentEvent);
  }

  emit(event: AgentEvent): void {
    for (const listener of this.#listeners) {
      if (this.#broken.has(listener)) continue;
      try {
        listener(event);
      } catch (error) {
        this.#broken.add(listener);
        process.stderr.write(`swerun: an event subscriber failed and was disabled: ${String(error)}\n`);
      }
    }
  }
}
