import { basename, join } from "node:path";
import pc from "picocolors";
import type { DockerHostConfig } from "../config/docker-hosts.js";
import { closeDockerClient, connectDocker } from "../environments/docker/client.js";
import { batchGrader } from "../eval/batch-grader.js";
import { evalInstances } from "../eval/eval-instance.js";
import { DEFAULT_EVAL_TIMEOUT } from "../eval/harness-constants.js";
import { writeRunMetadata } from "../eval/run-metadata.js";
import type { Instance } from "../swebench/dataset.js";
import { datasetDirOf, recordedDatasetName } from "../swebench/dataset-source.js";
import { DEFAULT_IMAGE_TEMPLATE } from "../swebench/image-name.js";

/**
 * `swebench --eval`: checks the dataset's grading columns and the Docker daemon before the first model
 * call, then grades each instance as it ends. The second Ctrl-C (or SIGTERM) stops the running gradings.
 */
export async function startBatchGrading(options: {
  instances: Instance[];
  subset: string;
  split: string;
  imageTemplate?: string;
  folder: string;
  /** The batch's run id (its grading containers are labelled with it). */
  runId: string;
  modelName: string;
  workers: number;
  /** The batch's pool of Docker hosts: each instance is graded on its own host. */
  hosts?: DockerHostConfig[];
  hostsSource?: string;
  say: (line: string) => void;
}) {
  const specs = evalInstances(
    options.instances,
    options.subset,
    options.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE,
  );
  // With a pool, the batch pings its hosts; without one, the daemon must answer before the first model call.
  const pool = options.hosts && options.hosts.length > 0;
  const docker = pool ? undefined : await connectDocker();
  const runId = basename(options.folder);
  writeRunMetadata(join(options.folder, "eval"), runId, {
    dataset: recordedDatasetName(options.subset),
    split: options.split,
  });
  const datasetDir = datasetDirOf(options.subset);
  const grader = batchGrader({
    ...(docker ? { docker } : {}),
    ...(pool ? { hosts: options.hosts, hostsSource: options.hostsSource ?? "--docker-host" } : {}),
    instances: specs,
    rows: options.instances,
    ...(datasetDir ? { datasetDir } : {}),
    folder: options.folder,
    runId,
    containerRunId: options.runId,
    modelName: options.modelName,
    workers: options.workers,
    timeoutSeconds: DEFAULT_EVAL_TIMEOUT,
    say: options.say,
  });
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts >= 2) grader.stop();
  };
  const onSigterm = () => grader.stop();
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  return {
    submit: grader.submit,
    prepare: grader.prepare,
    prepareEarly: grader.prepareEarly,
    submitted: grader.submitted,
    lost: grader.lost,
    async finish(): Promise<void> {
      try {
        const { report, path } = await grader.finish();
        process.stdout.write(
          `${pc.bold("resolved:")} ${report.resolved_instances}/${report.total_instances} (${report.completed_instances} graded, ${report.empty_patch_instances} empty, ${report.error_instances} errors)\n`,
        );
        process.stdout.write(`${pc.bold("eval report:")} ${path}\n`);
      } finally {
        process.off("SIGINT", onSigint);
        process.off("SIGTERM", onSigterm);
        grader.close();
        if (docker) closeDockerClient(docker);
      }
    },
  };
}
