// What a batch is asked to run (`BatchOptions`) and what it reports when it ends (`BatchSummary`).
import type { DockerHostConfig } from "../config/docker-hosts.js";
import type { SwerunConfig } from "../config/schema.js";
import type { Instance } from "../datasets/dataset.js";
import type { DatasetSelection } from "../formats/run-json.js";
import type { FileWriteError } from "../util/file-error.js";
import type { BatchDisplay } from "./display.js";
import type { BatchImages, HoldImage } from "./images.js";
import type { InstanceContext, InstanceResult } from "./instance.js";
import type { SwarmStreams } from "./swarms.js";

export interface BatchOptions {
  instances: Instance[];
  config: SwerunConfig;
  outputDir: string;
  workers: number;
  redoExisting: boolean;
  runId: string;
  label?: string;
  subset: string;
  split: string;
  /** How the instances were selected (recorded in run.json). */
  dataset?: Omit<DatasetSelection, "subset" | "split">;
  /** The image name template (recorded in run.json's agent snapshot). */
  imageTemplate?: string;
  display: BatchDisplay;
  prepare: InstanceContext["prepare"];
  /**
   * Removes the Docker containers an earlier run of this folder (`runId`, from its run.json) left behind
   * when it was killed; returns one line per container removed. Called when the batch starts, with the
   * pool's hosts that answer when there is a pool.
   */
  removeContainers?: (runId: string, hosts?: DockerHostConfig[]) => Promise<string[]>;
  /** Called after each instance ends and its prediction is saved (e.g. `--eval` grades it); must not throw. */
  onInstanceEnd?: (result: InstanceResult, host?: DockerHostConfig) => void;
  /**
   * Called when an instance's agent starts, its environment up (`--eval` starts the grading container
   * then if `onInstanceStart` did not, its image still to pull or build); must not throw.
   */
  onInstanceRunning?: (instanceId: string, host?: DockerHostConfig) => void;
  /**
   * Called as an instance starts, before its environment (`--eval` may start its grading container then).
   * With a pool of hosts, these callbacks are told the host the instance runs on.
   */
  onInstanceStart?: (instanceId: string, host?: DockerHostConfig) => void;
  /**
   * Kubernetes: deletes the pods and run ConfigMaps an earlier run of this folder (`runId`) left behind when
   * it was killed; returns one line per object deleted. Called when the batch starts.
   */
  removePods?: (runId: string) => Promise<string[]>;
  /**
   * Called when an instance's run is not kept: lost with its host or its pod (it goes back to the queue), or
   * its trajectory could not be written (it runs again when the batch is resumed); must not throw.
   */
  onInstanceLost?: (instanceId: string) => void;
  /**
   * Called when an instance's agent submits, before its environment is closed and its prediction saved
   * (`--eval` begins grading then; `onInstanceEnd` follows with the same submission); must not throw.
   */
  onInstanceSubmitted?: (instanceId: string, submission: string, host?: DockerHostConfig) => void;
  /** Event streams (`--events`), see batch-swarms.ts. */
  eventStreams?: SwarmStreams;
  /** Several Docker daemons (host-pool.ts); `workers` is then their sum. */
  hosts?: DockerHostConfig[];
  /** Where `hosts` came from, for messages (`--docker-host`, `environment.docker_hosts`). */
  hostsSource?: string;
  /** How often a down host is tried again, in ms (default 5000). */
  hostProbeMs?: number;
  /** How long a host running instances may take to answer a ping before it is down (default 30 s). */
  hostAnswerTimeoutMs?: number;
  /** An instance's image, so the pool can prefer a host that has it. */
  imageOf?: (instance: Instance) => string | undefined;
  /** Docker batches: pull ahead, the disk budget and the preflight (batch-images.ts). */
  images?: BatchImages;
  /** Given, as the batch starts, how to get an image through its images (`--eval`'s gradings outside their instance). */
  onImages?: (hold: HoldImage) => void;
  /** Called when the workers are done, before the images close (`--eval` ends its gradings then); must not throw. */
  onWorkersDone?: () => Promise<void>;
}

export interface BatchSummary {
  /** The instances by exit status, as their trajectories in the folder record them. */
  statuses: Map<string, string[]>;
  cost: number;
  interrupted: boolean;
  /** Every Docker host of the pool went down: the batch stopped early (resumable). */
  hostsDown?: boolean;
  /**
   * The first output the batch could not write (a full disk, a folder made read-only): no new instance
   * started after it (resumable once the folder can be written again).
   */
  outputFailure?: FileWriteError;
  /**
   * Instances whose run this batch could not save: their earlier trajectory (`kept`, counted in `statuses`)
   * or nothing stays, and `cost` was spent on them all the same.
   */
  unsaved?: Array<{ instance_id: string; cost: number; kept: boolean }>;
}
