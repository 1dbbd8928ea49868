import type { GradeOptions } from "./grade-instance.js";
import { type GradingContainer, startGradingContainer } from "./grading-container.js";
import type { InstanceLog } from "./instance-log.js";

/**
 * The grading's fresh container: `options.startContainer`'s (a pod), else one started on `options.docker`.
 * `onCreated` is told it as soon as it exists, so a failed start still removes it.
 */
function startContainer(
  options: GradeOptions,
  log: InstanceLog,
  phase: (phase: string) => void,
  onCreated: (created: GradingContainer) => void,
): Promise<GradingContainer> {
  const { instance } = options;
  const creating = () => {
    phase("starting");
    log.info(`Creating container for ${instance.instance_id}...`);
  };
  const created = (container: GradingContainer) => {
    onCreated(container);
    log.info(`Container for ${instance.instance_id} created: ${container.box.id}`);
  };
  if (options.startContainer) return options.startContainer({ onCreating: creating, onCreated: created });
  if (!options.docker)
    throw new Error("gradeInstance: neither a Docker client nor a way to start a container");
  return startGradingContainer({
    docker: options.docker,
    instance,
    runId: options.containerRunId ?? options.runId,
    ...(options.keep ? { keep: true } : {}),
    ...(options.network ? { network: options.network } : {}),
    ...(options.pullTimeoutSeconds ? { pullTimeoutSeconds: options.pullTimeoutSeconds } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    onCreating: creating,
    onCreated: created,
  });
}

/**
 * The grading's first phase: the container started for it ahead of time (`options.started`), else a fresh
 * one (pulled and started now). `onCreated` is told it as soon as it exists, so the caller removes it however
 * the grading ends.
 */
export async function openGradingContainer(
  options: GradeOptions,
  log: InstanceLog,
  phase: (phase: string) => void,
  onCreated: (created: GradingContainer) => void,
): Promise<GradingContainer> {
  const { instance } = options;
  let grading = options.started ? await options.started.catch(() => undefined) : undefined;
  if (grading) {
    onCreated(grading);
    log.info(`Creating container for ${instance.instance_id}...`);
    log.info(`Container for ${instance.instance_id} created: ${grading.box.id}`);
  } else {
    phase("pulling");
    grading = await startContainer(options, log, phase, onCreated);
  }
  log.info(`Container for ${instance.instance_id} started: ${grading.box.id}`);
  if (options.keep)
    options.onProgress?.(`${instance.instance_id}: container kept: docker exec -it ${grading.name} bash`);
  return grading;
}
