import type { ModelConfig } from "../config/schema.js";
import type { AgentEvent } from "../events.js";
import { monotonicMs } from "../util/clock.js";
import { replyTooLarge } from "./reply-cap.js";
import {
  classifyError,
  type ErrorContext,
  ModelRetriesExhaustedError,
  type RetryPolicy,
  TransientModelError,
  withRetry,
} from "./retry.js";

/** A failed request attempt, as the reply records it (`extra.retries`). */
export type RetryRecord = {
  attempt: number;
  error: string;
  error_class: string;
  duration_s: number;
  delay_s: number;
};

/** What one model call's retries need: the user's signal, the endpoint for messages, the timeout, the events. */
export interface RetryingRequestOptions {
  signal: AbortSignal | undefined;
  errors: ErrorContext;
  /** Seconds one attempt may take, body included. */
  timeoutS: number;
  emit: ((event: AgentEvent) => void) | undefined;
}

/**
 * Runs `attempt` (one request, given a signal that aborts on the user's interrupt or the request timeout)
 * as the config's retry policy says. Failed attempts are recorded (`retries`: error and duration each, for
 * reports) and announced as events; when all fail, the error carries them.
 */
export async function requestWithRetries<T>(
  attempt: (number: number, signal: AbortSignal) => Promise<T>,
  config: ModelConfig,
  options: RetryingRequestOptions,
): Promise<{ response: T; durationS: number; retries: RetryRecord[] }> {
  const policy: RetryPolicy = {
    attempts: config.retry_attempts,
    minWaitS: config.retry_min_wait,
    maxWaitS: config.retry_max_wait,
  };
  const { signal, errors, emit } = options;
  const retries: RetryRecord[] = [];
  let attemptStarted = 0;
  const record = (number: number, error: string, errorClass: string, delayS: number) =>
    retries.push({
      attempt: number,
      error,
      error_class: errorClass,
      duration_s: (monotonicMs() - attemptStarted) / 1000,
      delay_s: delayS,
    });
  const timed = (number: number) => {
    attemptStarted = monotonicMs();
    return timedAttempt(attempt, number, options);
  };
  const { response, durationS } = await withRetry(timed, policy, {
    signal,
    // The attempts of a call that never got a reply are recorded with the run's error (its exit message).
    endpoint: `${errors.baseURL} (model "${errors.model}")`,
    onRetry: ({ attempt: number, maxRetries, error, errorClass, delayS }) => {
      record(number, error, errorClass, delayS);
      emit?.({
        type: "model_retry",
        attempt: number,
        max_retries: maxRetries,
        error_class: errorClass,
        error,
        delay_s: delayS,
        time: Date.now() / 1000,
      });
    },
    onExhausted: ({ attempts, error, errorClass }) => {
      record(attempts, error, errorClass, 0);
      emit?.({
        type: "model_retry_exhausted",
        attempts,
        error_class: errorClass,
        error,
        time: Date.now() / 1000,
      });
    },
  }).catch((error: unknown) => {
    if (error instanceof ModelRetriesExhaustedError) error.retries = retries;
    throw error;
  });
  return { response, durationS, retries };
}

/** One attempt, bounded by the request timeout; failures come back classified (retry or stop). */
async function timedAttempt<T>(
  attempt: (number: number, signal: AbortSignal) => Promise<T>,
  number: number,
  options: RetryingRequestOptions,
): Promise<{ response: T; durationS: number }> {
  const { signal, timeoutS } = options;
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutS * 1000);
  const started = monotonicMs();
  try {
    const combined = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;
    const response = await attempt(number, combined);
    return { response, durationS: (monotonicMs() - started) / 1000 };
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? error;
    if (timeout.signal.aborted) {
      throw new TransientModelError(`no response within ${timeoutS} s`, undefined, "TimeoutError");
    }
    throw replyTooLarge(error) ?? classifyError(error, options.errors);
  } finally {
    clearTimeout(timer);
  }
}
