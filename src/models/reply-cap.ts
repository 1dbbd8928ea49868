import { formatBytes } from "../util/bytes.js";
import { ModelRequestError } from "./model-errors.js";

/**
 * The most bytes a model's HTTP reply may have: 16 MiB. The longest replies models give (128 k output tokens,
 * reasoning included) are under 1 MiB of JSON, an image or audio in a reply a few MiB; a larger body is a proxy
 * or server sending something else. Read whole, it costs about ten times its size in memory (a 100 MB reply
 * took 1 GB) and is stored twice in the trajectory (content and response).
 */
export const MAX_REPLY_BYTES = 16 * 1024 * 1024;

/**
 * A reply over MAX_REPLY_BYTES: the read stops there and the run ends with this error. Not retried: the same
 * request would most likely be answered the same way, and paid again.
 */
export class ModelReplyTooLargeError extends ModelRequestError {}

/** `announced`: the Content-Length over the cap; without it the body passed the cap as it arrived. */
function tooLarge(url: string, maxBytes: number, announced?: number): ModelReplyTooLargeError {
  const cap = `the ${formatBytes(maxBytes)} a model reply may have`;
  const size =
    announced === undefined
      ? `passed ${cap}`
      : `has ${formatBytes(announced)} (Content-Length), more than ${cap}`;
  return new ModelReplyTooLargeError(
    `the reply from ${url} ${size} (the longest replies models give are under 1 MiB): not read further`,
  );
}

/** The error behind `error` (the client wraps what its fetch throws), if it is a ModelReplyTooLargeError. */
export function replyTooLarge(error: unknown): ModelReplyTooLargeError | undefined {
  for (let current = error; current instanceof Error; current = current.cause)
    if (current instanceof ModelReplyTooLargeError) return current;
  return undefined;
}

/**
 * `fetch` for the model client whose response body stops with a ModelReplyTooLargeError past `maxBytes`:
 * at once when the server announces a larger Content-Length, else as the bytes arrive (the rest is not read).
 */
export function cappedFetch(maxBytes = MAX_REPLY_BYTES): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = response.url || String(input);
    const announced = Number(response.headers.get("content-length"));
    if (announced > maxBytes) {
      await response.body?.cancel();
      throw tooLarge(url, maxBytes, announced);
    }
    if (!response.body) return response;
    let bytes = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          bytes += chunk.byteLength;
          if (bytes > maxBytes) controller.error(tooLarge(url, maxBytes));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
