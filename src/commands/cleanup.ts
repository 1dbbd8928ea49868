import { type CleanupOptions, cleanContainers } from "../environments/docker/cleanup.js";

/**
 * `swerun cleanup`: removes the containers runs left behind, on every daemon given (the work is
 * environments/docker/cleanup.ts's, which a resumed batch uses too). Returns the exit code.
 */
export function runCleanup(options: CleanupOptions = {}): Promise<number> {
  return cleanContainers(options);
}
