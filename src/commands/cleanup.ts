import { type CleanupOptions, cleanContainers } from "../environments/docker/cleanup.js";
import type { FlagsOf } from "./options.js";

/**
 * `swerun cleanup`: removes the containers runs left behind, on every daemon given (the work is
 * environments/docker/cleanup.ts's, which a resumed batch uses too), or with `--kubernetes` the pods and run
 * ConfigMaps they left on the cluster (environments/kubernetes/cleanup.ts). Returns the exit code.
 */
export async function runCleanup(flags: FlagsOf<"cleanup"> & CleanupOptions = {}): Promise<number> {
  if (flags.kubernetes) {
    const { cleanPods } = await import("../environments/kubernetes/cleanup.js");
    return cleanPods({
      runId: flags.runId,
      all: flags.all,
      dryRun: flags.dryRun,
      namespace: flags.namespace,
      context: flags.kubeContext,
      ...(flags.print ? { print: flags.print } : {}),
    });
  }
  const { all, runId, skipKept, dryRun, print, dockerHost, hosts } = flags;
  return cleanContainers({ all, runId, skipKept, dryRun, print, dockerHost, hosts });
}
