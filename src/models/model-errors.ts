/**
 * The errors of model requests. A file of their own, without the OpenAI client, so that what only needs to
 * recognize them (the event stream, a run with a scripted model) does not load the client (~230 KB).
 */
import { UserError } from "../errors.js";

/** A request that failed and is worth another attempt; `retryAfterS` is the wait the server asked for. */
export class TransientModelError extends Error {
  readonly retryAfterS: number | undefined;
  /** The class of the failure behind it (`InternalServerError`, `APIConnectionError`, `TimeoutError`...). */
  readonly errorClass: string;
  constructor(message: string, retryAfterS?: number, errorClass = "TransientModelError") {
    super(message);
    this.name = "TransientModelError";
    this.retryAfterS = retryAfterS;
    this.errorClass = errorClass;
  }
}

/** A model request that must not be retried (auth, permission, not found, bad request, context window). */
export class ModelRequestError extends UserError {
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.name = new.target.name;
    this.status = status;
  }
}
export class ModelAuthenticationError extends ModelRequestError {}
export class ModelPermissionError extends ModelRequestError {}
export class ModelNotFoundError extends ModelRequestError {}
export class ModelBadRequestError extends ModelRequestError {}
export class ContextWindowExceededError extends ModelRequestError {}
/** Every attempt failed with a transient error. */
export class ModelRetriesExhaustedError extends ModelRequestError {
  /** Attempts made, and the class of the last failure (see TransientModelError.errorClass). */
  readonly attempts: number;
  readonly errorClass: string;
  /** Each failed attempt (error, duration, wait after it), as the model records retries; set by the model. */
  retries: unknown[] = [];
  constructor(message: string, attempts = 0, errorClass = "TransientModelError") {
    super(message);
    this.attempts = attempts;
    this.errorClass = errorClass;
  }
}
