/**
 * The one two-stage Ctrl-C handler, for a run, a batch and a grading:
 *
 * | state       | SIGINT                      | SIGTERM                 |
 * | ----------- | --------------------------- | ----------------------- |
 * | running     | `interrupt()` → interrupted | `stop()` → stopping     |
 * | interrupted | `stop()` → stopping         | `stop()` → stopping     |
 * | stopping    | `third` (default: exit 130) | `stop()` again          |
 *
 * `reset` takes an interrupted run back to running once the user has answered; `dispose` removes the handlers.
 * With `third: "stop"` (a batch: its instances are stopping) a third Ctrl-C calls `stop()` again.
 */
export type InterruptState = "running" | "interrupted" | "stopping";

export interface InterruptHandlers {
  interrupt: () => void;
  stop: () => void;
  /** What a SIGINT does once stopping: exit at once (130), or call `stop()` again. */
  third?: "exit" | "stop";
}

/** The state after `signal` in `state`, and what to call. */
export function nextInterruptState(
  state: InterruptState,
  signal: "SIGINT" | "SIGTERM",
  third: "exit" | "stop" = "exit",
): { state: InterruptState; call: "interrupt" | "stop" | "exit" } {
  if (signal === "SIGTERM") return { state: "stopping", call: "stop" };
  if (state === "running") return { state: "interrupted", call: "interrupt" };
  if (state === "interrupted") return { state: "stopping", call: "stop" };
  return { state, call: third === "exit" ? "exit" : "stop" };
}

export function onInterruptSignals(handlers: InterruptHandlers): {
  reset: () => void;
  dispose: () => void;
  state: () => InterruptState;
} {
  let state: InterruptState = "running";
  const on = (signal: "SIGINT" | "SIGTERM") => () => {
    const next = nextInterruptState(state, signal, handlers.third);
    state = next.state;
    if (next.call === "exit") process.exit(130);
    handlers[next.call]();
  };
  const onSigint = on("SIGINT");
  const onSigterm = on("SIGTERM");
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  return {
    reset: () => {
      if (state === "interrupted") state = "running";
    },
    dispose: () => {
      process.off("SIGINT", onSigint);
      process.off("SIGTERM", onSigterm);
    },
    state: () => state,
  };
}

/** Ctrl-C before the agent exists: remove a container that is still being started (the start then fails). */
export function abortStartup(): void {
  void import("../environments/docker/live-containers.js").then((registry) =>
    registry.removeAllLiveContainers(),
  );
}
