import { basename, join } from "node:path";
import pc from "picocolors";
import type { DockerHostConfig } from "../config/docker-hosts.js";
import type { KubernetesEnvironmentConfig } from "../config/schema.js";
import type { Instance } from "../datasets/dataset.js";
import { datasetDirOf, recordedDatasetName } from "../datasets/dataset-source.js";
import { DEFAULT_IMAGE_TEMPLATE } from "../datasets/image-name.js";
import { closeDockerClient, connectDocker } from "../environments/docker/client.js";
import { recordedEvalRunId } from "../eval/earlier-gradings.js";
import { evalInstances } from "../eval/eval-instance.js";
import { resolvedSummary } from "../eval/grading-driver.js";
import { DEFAULT_EVAL_TIMEOUT } from "../eval/harness-constants.js";
import { writeRunMetadata } from "../eval/run-metadata.js";
import { runJsonPath } from "../formats/run-json.js";
import { onInterruptSignals } from "../run/signals.js";
import type { BatchOptions } from "./batch-options.js";
import { BatchGrader } from "./grader.js";

/** The hooks of a batch that tell its grader the instances' events. */
type GradingHooks = Required<
  Pick<
    BatchOptions,
    | "onInstanceStart"
    | "onInstanceRunning"
    | "onInstanceSubmitted"
    | "onInstanceEnd"
    | "onInstanceLost"
    | "onImages"
    | "onWorkersDone"
  >
>;

export interface BatchGradingOptions {
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
  /** A batch on Kubernetes: each instance is graded in a fresh pod on its cluster. */
  kubernetes?: KubernetesEnvironmentConfig;
  hostsSource?: string;
  say: (line: string) => void;
}

/**
 * `swebench --eval`'s grading, for the `swebench` command: checks the dataset's grading columns and the
 * Docker daemon before the first model call, then grades each instance as it ends (BatchGrader, told by the
 * batch's `hooks`). The second Ctrl-C (or SIGTERM) stops the running gradings.
 */
export async function startBatchGrading(options: BatchGradingOptions) {
  const specs = evalInstances(
    options.instances,
    options.subset,
    options.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE,
  );
  // With a pool, the batch pings its hosts; without one, the daemon must answer before the first model call.
  const pool = options.hosts && options.hosts.length > 0;
  const docker = pool || options.kubernetes ? undefined : await connectDocker();
  // A renamed folder keeps the run id its gradings were logged under.
  const runId = recordedEvalRunId(runJsonPath(options.folder)) ?? basename(options.folder);
  writeRunMetadata(join(options.folder, "eval"), runId, {
    dataset: recordedDatasetName(options.subset),
    split: options.split,
  });
  const datasetDir = datasetDirOf(options.subset);
  const grader = new BatchGrader({
    ...(docker ? { docker } : {}),
    ...(options.kubernetes ? { kubernetes: options.kubernetes } : {}),
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
  // Only the second Ctrl-C (or SIGTERM) concerns the grading: the batch handles the first.
  const signals = onInterruptSignals({ interrupt: () => {}, stop: () => grader.stop(), third: "stop" });
  return {
    /** The batch's hooks (BatchOptions) that tell the grader its instances' events. */
    hooks: gradingHooks(grader),
    async finish(): Promise<void> {
      try {
        const { report, path } = await grader.finish();
        process.stdout.write(`${pc.bold("resolved:")} ${resolvedSummary(report)}\n`);
        process.stdout.write(`${pc.bold("eval report:")} ${path}\n`);
      } finally {
        signals.dispose();
        grader.close();
        if (docker) closeDockerClient(docker);
      }
    },
  };
}

/** The batch's hooks that tell `grader` its instances' events (see the table above BatchGrader). */
function gradingHooks(grader: BatchGrader): GradingHooks {
  return {
    onInstanceStart: (id, host) => grader.prepareEarly(id, host),
    onInstanceRunning: (id, host) => grader.prepare(id, host),
    onInstanceSubmitted: (id, submission, host) => grader.submitted(id, submission, host),
    onInstanceEnd: (result, host) => grader.submit(result.instance_id, result.submission, host),
    onInstanceLost: (id) => grader.lost(id),
    onImages: (hold) => grader.useImages(hold),
    onWorkersDone: () => grader.drain(),
  };
}
