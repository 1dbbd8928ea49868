import { describe, expect, it } from "vitest";
import {
  backoffSeconds,
  ModelRetriesExhaustedError,
  type RetryNotice,
  retryAfterSeconds,
  TransientModelError,
  withRetry,
} from "../../src/models/retry.js";

const policy = { attempts: 10, minWaitS: 4, maxWaitS: 60 };

describe("backoffSeconds", () => {
  it("grows exponentially with jitter between min and max", () => {
    expect(backoffSeconds(1, policy, () => 0)).toBe(4);
    expect(backoffSeconds(3, policy, () => 0)).toBe(8);
    expect(backoffSeconds(3, policy, () => 1)).toBe(16);
    expect(backoffSeconds(10, policy, () => 1)).toBe(60);
  });
});

describe("retryAfterSeconds", () => {
  it("reads retry-after-ms, Retry-After seconds and HTTP dates", () => {
    expect(retryAfterSeconds(new Headers({ "retry-after-ms": "250" }))).toBe(0.25);
    expect(retryAfterSeconds(new Headers({ "retry-after": "7" }))).toBe(7);
    const date = new Date(Date.now() + 30_000).toUTCString();
    expect(retryAfterSeconds(new Headers({ "retry-after": date }))).toBeGreaterThan(25);
    expect(retryAfterSeconds(new Headers())).toBeUndefined();
  });
});

describe("withRetry", () => {
  const fast = { attempts: 3, minWaitS: 0.001, maxWaitS: 0.002 };

  it("retries transient errors, reports each retry, and returns the first success", async () => {
    const notices: RetryNotice[] = [];
    let calls = 0;
    const result = await withRetry(
      async () => {
        calls += 1;
        if (calls < 3)
          throw new TransientModelError(`HTTP 503: busy ${calls}`, calls === 1 ? 0.01 : undefined);
        return "ok";
      },
      fast,
      { onRetry: (notice) => notices.push(notice) },
    );
    expect(result).toBe("ok");
    expect(notices.map((n) => [n.attempt, n.error])).toEqual([
      [1, "HTTP 503: busy 1"],
      [2, "HTTP 503: busy 2"],
    ]);
    expect(notices[0]?.delayS).toBe(0.01);
  });

  it("gives up after the last attempt with the last error", async () => {
    const attempt = withRetry(async () => Promise.reject(new TransientModelError("HTTP 500: down")), fast);
    await expect(attempt).rejects.toThrow(ModelRetriesExhaustedError);
    await expect(attempt).rejects.toThrow("failed 3 times; last error: HTTP 500: down");
  });

  it("does not retry other errors", async () => {
    let calls = 0;
    const failure = new Error("bug");
    await expect(
      withRetry(async () => {
        calls += 1;
        throw failure;
      }, fast),
    ).rejects.toBe(failure);
    expect(calls).toBe(1);
  });

  it("stops waiting when the signal aborts", async () => {
    const controller = new AbortController();
    const reason = new Error("interrupted");
    const attempt = withRetry(async () => Promise.reject(new TransientModelError("x", 60)), fast, {
      signal: controller.signal,
      onRetry: () => queueMicrotask(() => controller.abort(reason)),
    });
    await expect(attempt).rejects.toBe(reason);
  });
});
