import { afterEach, describe, expect, it } from "vitest";
import { nextInterruptState, onInterruptSignals } from "../../src/run/signals.js";

describe("nextInterruptState", () => {
  it("follows the table: Ctrl-C interrupts, a second Ctrl-C or SIGTERM stops, a third exits or stops again", () => {
    expect(nextInterruptState("running", "SIGINT")).toEqual({ state: "interrupted", call: "interrupt" });
    expect(nextInterruptState("interrupted", "SIGINT")).toEqual({ state: "stopping", call: "stop" });
    expect(nextInterruptState("stopping", "SIGINT")).toEqual({ state: "stopping", call: "exit" });
    expect(nextInterruptState("stopping", "SIGINT", "stop")).toEqual({ state: "stopping", call: "stop" });
    for (const state of ["running", "interrupted", "stopping"] as const)
      expect(nextInterruptState(state, "SIGTERM")).toEqual({ state: "stopping", call: "stop" });
  });
});

describe("onInterruptSignals", () => {
  let dispose: (() => void) | undefined;
  afterEach(() => dispose?.());

  it("calls the handlers as the process receives the signals, and leaves the process alone once disposed", () => {
    const calls: string[] = [];
    const before = process.listenerCount("SIGINT");
    const signals = onInterruptSignals({
      interrupt: () => calls.push("interrupt"),
      stop: () => calls.push("stop"),
      third: "stop",
    });
    dispose = signals.dispose;
    process.emit("SIGINT");
    expect(signals.state()).toBe("interrupted");
    signals.reset();
    expect(signals.state()).toBe("running");
    process.emit("SIGINT");
    process.emit("SIGINT");
    process.emit("SIGINT");
    process.emit("SIGTERM");
    expect(calls).toEqual(["interrupt", "interrupt", "stop", "stop", "stop"]);
    signals.dispose();
    expect(process.listenerCount("SIGINT")).toBe(before);
  });
});
