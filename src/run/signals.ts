/**
 * Ctrl-C and SIGTERM while a run is going: the first SIGINT calls `interrupt`, a second one (or SIGTERM)
 * calls `stop`; a third SIGINT exits at once. `reset` re-arms the first-Ctrl-C behaviour once the user has
 * answered; `dispose` removes the handlers.
 */
export function onInterruptSignals(handlers: { interrupt: () => void; stop: () => void }): {
  reset: () => void;
  dispose: () => void;
} {
  let count = 0;
  const onSigint = () => {
    count += 1;
    if (count === 1) handlers.interrupt();
    else if (count === 2) handlers.stop();
    else process.exit(130);
  };
  const onSigterm = () => {
    count = Math.max(count, 2);
    handlers.stop();
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  return {
    reset: () => {
      if (count === 1) count = 0;
    },
    dispose: () => {
      process.off("SIGINT", onSigint);
      process.off("SIGTERM", onSigterm);
    },
  };
}

/** Ctrl-C before the agent exists: remove a container that is still being started (the start then fails). */
export function abortStartup(): void {
  void import("../environments/docker/registry.js").then((registry) => registry.removeAllLiveContainers());
}
