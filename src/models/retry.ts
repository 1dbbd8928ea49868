import { redact } from "../util/secrets.js";
import {
  ContextWindowExceededError,
  ModelAuthenticationError,
  ModelBadRequestError,
  ModelNotFoundError,
  ModelPermissionError,
  ModelRequestError,
  ModelRetriesExhaustedError,
  TransientModelError,
} from "./model-errors.js";

// The error classes live in model-errors.ts (which does not load the OpenAI client); re-exported here.
export {
  ContextWindowExceededError,
  ModelAuthenticationError,
  ModelBadRequestError,
  ModelNotFoundError,
  ModelPermissionError,
  ModelRequestError,
  ModelRetriesExhaustedError,
  TransientModelError,
};

/** How often and how long a failed model request is retried. */
export interface RetryPolicy {
  /** Attempts in total, the first included. */
  attempts: number;
  /** Shortest and longest wait between attempts, in seconds (exponential backoff with jitter in between). */
  minWaitS: number;
  maxWaitS: number;
}

/** What the error messages of one endpoint may mention (never the key itself). */
export interface ErrorContext {
  model: string;
  baseURL: string;
  /** The variable that holds the key, for "set X" advice. */
  keyVar: string;
  /** Where the key in use came from ("environment", a file path), if there is one. */
  keySource: string | undefined;
}

/** Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date); undefined if absent. */
export function retryAfterSeconds(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const value = headers?.get("retry-after");
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** Exponential backoff (min·2^(attempt−1)) with equal jitter, clamped to [min, max]. `attempt` counts from 1. */
export function backoffSeconds(
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const exponential = policy.minWaitS * 2 ** (attempt - 1);
  const jittered = exponential / 2 + (random() * exponential) / 2;
  return Math.min(policy.maxWaitS, Math.max(policy.minWaitS, jittered));
}

/** A server's Retry-After is honoured, up to ten minutes, even beyond `maxWaitS`. */
const MAX_RETRY_AFTER_S = 600;

function oneLine(text: string, limit = 400): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > limit ? `${flat.slice(0, limit)}…` : flat;
}

/**
 * An HTTP error of the OpenAI or Anthropic SDK (both name their classes alike): its status, headers, parsed
 * body (`error`) and, for OpenAI, its error code.
 */
interface SdkHttpError extends Error {
  status: number;
  headers: Headers | undefined;
  error: unknown;
  code?: unknown;
}

function isSdkHttpError(error: unknown): error is SdkHttpError {
  return error instanceof Error && typeof (error as { status?: unknown }).status === "number";
}

/** The SDKs' "cannot connect" errors (APIConnectionError, APIConnectionTimeoutError). */
function isSdkConnectionError(error: unknown): error is Error {
  return error instanceof Error && /^APIConnection(Timeout)?Error$/.test(error.constructor.name);
}

/** The server's own message: OpenAI's `{error: {message}}` body, Anthropic's `{type: "error", error: {message}}`. */
function serverMessage(error: SdkHttpError): string {
  const body = error.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const text = typeof body?.message === "string" ? body.message : body?.error?.message;
  const message = typeof text === "string" ? text : error.message;
  return oneLine(redact(message.replace(/^\d{3}\s+/, ""))) || "(no message)";
}

const CONTEXT_WINDOW =
  /context[_ ]length|context[_ ]window|maximum context|prompt is too long|too many tokens/i;

/** Whether a TypeError is fetch's report of a connection lost mid-response. */
function isCutConnection(error: TypeError): boolean {
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return (
    error.message === "terminated" ||
    (typeof code === "string" && /^(UND_ERR_SOCKET|ECONNRESET|EPIPE|UND_ERR_BODY_TIMEOUT)$/.test(code))
  );
}

/**
 * Turns a failed request into a TransientModelError (retry it) or a ModelRequestError (stop the run).
 * Anything else (the user's abort, a bug) is returned unchanged.
 */
export function classifyError(error: unknown, context: ErrorContext): unknown {
  if (error instanceof TransientModelError || error instanceof ModelRequestError) return error;
  if (isSdkHttpError(error)) return classifyHttpError(error, error.status, context);
  return classifyTransportError(error, context) ?? error;
}

/** A response that did not arrive whole, or a server that could not be reached: worth another attempt. */
function classifyTransportError(error: unknown, context: ErrorContext): TransientModelError | undefined {
  // A body cut off on the way (a proxy, a dropped connection) is worth another attempt, like a 5xx.
  if (error instanceof SyntaxError) {
    return new TransientModelError(
      `the response was not valid JSON (${oneLine(redact(error.message))})`,
      undefined,
      error.constructor.name,
    );
  }
  // The connection dropped while the body was arriving (undici's "terminated", a reset socket).
  if (error instanceof TypeError && isCutConnection(error)) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return new TransientModelError(
      `the connection was cut before the response ended (${oneLine(redact(error.message + cause))})`,
    );
  }
  if (isSdkConnectionError(error)) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return new TransientModelError(
      `cannot reach ${context.baseURL}: ${oneLine(redact(error.message + cause))}`,
      undefined,
      error.constructor.name,
    );
  }
  return undefined;
}

/** An HTTP error status: 408, 409, 429 (but an exhausted quota) and 5xx are retried; the others stop the run. */
function classifyHttpError(error: SdkHttpError, status: number, context: ErrorContext): Error {
  const message = serverMessage(error);
  const where = `${context.baseURL} (model "${context.model}")`;
  if (status === 429 && error.code === "insufficient_quota") {
    return new ModelRequestError(`quota exhausted (HTTP 429) at ${where}: ${message}`, status);
  }
  if (status === 408 || status === 409 || status === 429 || status >= 500) {
    return new TransientModelError(
      `HTTP ${status}: ${message}`,
      retryAfterSeconds(error.headers),
      error.constructor.name,
    );
  }
  if (status === 401) return authenticationError(status, where, message, context);
  if (status === 403)
    return new ModelPermissionError(`permission denied (HTTP 403) at ${where}: ${message}`, status);
  if (status === 404) {
    return new ModelNotFoundError(
      `not found (HTTP 404) at ${where}: ${message}. Check the model name and model_kwargs.api_base`,
      status,
    );
  }
  if (CONTEXT_WINDOW.test(message) || CONTEXT_WINDOW.test(String(error.code))) {
    return new ContextWindowExceededError(
      `the conversation no longer fits the context window of "${context.model}" (HTTP ${status}): ${message}`,
      status,
    );
  }
  if (status === 400 || status === 422) {
    return new ModelBadRequestError(
      `bad request (HTTP ${status}) at ${where}: ${message}. Check model.model_kwargs`,
      status,
    );
  }
  return new ModelRequestError(`request refused (HTTP ${status}) at ${where}: ${message}`, status);
}

/** HTTP 401: says which key was used (where it came from) and how to set one. */
function authenticationError(status: number, where: string, message: string, context: ErrorContext): Error {
  const source = context.keySource
    ? ` (the key in use came from ${context.keySource})`
    : " (no key was found)";
  return new ModelAuthenticationError(
    `authentication failed (HTTP 401) at ${where}: ${message}. Set ${context.keyVar} in the environment, ` +
      `in .env, or with \`swerun config set ${context.keyVar} <key>\`${source}`,
    status,
  );
}

/** Waits `seconds`, or rejects with the signal's reason when it aborts first. */
export function sleep(seconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, seconds * 1000);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** What a retry reports before it waits. */
export interface RetryNotice {
  /** The attempt that failed, from 1. */
  attempt: number;
  /** Attempts allowed in all (the policy's `attempts`). */
  maxRetries: number;
  error: string;
  /** See TransientModelError.errorClass. */
  errorClass: string;
  delayS: number;
}

/**
 * Runs `request` until it succeeds, throws something other than a TransientModelError, or the attempts
 * run out (then ModelRetriesExhaustedError). Waits honour Retry-After, else exponential backoff with jitter.
 */
export async function withRetry<T>(
  request: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  hooks: {
    signal?: AbortSignal;
    onRetry?: (notice: RetryNotice) => void;
    /** Called once when the attempts run out, before ModelRetriesExhaustedError is thrown. */
    onExhausted?: (notice: { attempts: number; error: string; errorClass: string }) => void;
    /** Named when the attempts run out, e.g. `http://host/v1 (model "x")`; never holds the key. */
    endpoint?: string;
  } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request(attempt);
    } catch (error) {
      if (!(error instanceof TransientModelError) || hooks.signal?.aborted) throw error;
      if (attempt >= policy.attempts) {
        hooks.onExhausted?.({ attempts: attempt, error: error.message, errorClass: error.errorClass });
        throw new ModelRetriesExhaustedError(
          `the model request${hooks.endpoint ? ` to ${hooks.endpoint}` : ""} failed ${attempt} time${attempt === 1 ? "" : "s"}; last error: ${error.message}`,
          attempt,
          error.errorClass,
        );
      }
      const delayS =
        error.retryAfterS !== undefined
          ? Math.min(error.retryAfterS, MAX_RETRY_AFTER_S)
          : backoffSeconds(attempt, policy);
      hooks.onRetry?.({
        attempt,
        maxRetries: policy.attempts,
        error: error.message,
        errorClass: error.errorClass,
        delayS,
      });
      await sleep(delayS, hooks.signal);
    }
  }
}
