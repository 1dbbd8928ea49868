import { describe, expect, it } from "vitest";
import { StepAbort } from "../../src/agent/step-abort.js";
import { UserInterruption } from "../../src/errors.js";

describe("StepAbort", () => {
  it("aborts the running step's signal; the next step gets a fresh one", () => {
    const abort = new StepAbort();
    const first = abort.signal;
    abort.abort(new Error("interrupted by the user"));
    expect(first.aborted).toBe(true);
    expect((first.reason as Error).message).toBe("interrupted by the user");
    expect(abort.stopStatus).toBeUndefined();
    expect(() => abort.throwIfStopped()).not.toThrow();
    abort.renew();
    expect(abort.signal.aborted).toBe(false);
  });

  it("after stop, throws the UserInterruption whose exit message carries the status given", () => {
    const abort = new StepAbort();
    abort.stop("Interrupted");
    expect(abort.signal.aborted).toBe(true);
    expect(abort.stopStatus).toBe("Interrupted");
    abort.renew();
    let thrown: unknown;
    try {
      abort.throwIfStopped();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UserInterruption);
    expect((thrown as UserInterruption).messages[0]?.extra).toEqual({
      exit_status: "Interrupted",
      submission: "",
    });
  });
});
