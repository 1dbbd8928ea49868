import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import type { Prediction } from "../datasets/predictions.js";
import { CONTAINER_LABELS } from "../environments/docker/container-labels.js";
import { pythonJson } from "../python/json-dumps-indent.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { pathInside } from "../util/safe-path.js";
import { redact } from "../util/secrets.js";
import { instanceLogDir, modelFolderName } from "./grade-instance.js";
import { LOG_FILES } from "./harness-constants.js";
import { classifyWith } from "./infra-failure.js";
import { firstMatches, joinedFileLogs } from "./test-log.js";

/** The harness's run report (`<model>.<run_id>.json`, schema_version 2), keys in its order. */
export interface RunReport {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  infra_failure_instances: number;
  ambiguous_failure_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  completed_ids: string[];
  incomplete_ids: string[];
  empty_patch_ids: string[];
  submitted_ids: string[];
  resolved_ids: string[];
  unresolved_ids: string[];
  infra_failure_ids: string[];
  ambiguous_failure_ids: string[];
  failure_reasons: Record<string, string>;
  error_ids: string[];
  schema_version: 2;
  unstopped_instances?: number;
  unstopped_containers?: string[];
  unremoved_images?: string[];
}

const sorted = (ids: Iterable<string>) => [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

export interface RunReportOptions {
  /** Every prediction read, by instance id. */
  predictions: Map<string, Prediction>;
  /** The dataset's instances (after --instance-ids / --filter): id and image. */
  dataset: Array<{ instance_id: string; image: string }>;
  runId: string;
  /** The run id the grading containers are labelled with (default `runId`). */
  containerRunId?: string;
  /** The folder holding logs/run_evaluation, where the report is written too. */
  outputDir: string;
  /** With a client: containers of this run still there, and dataset images on the daemon (as the harness lists them). */
  docker?: Docker;
}

/**
 * Builds the run report from the instances' report.json files on disk, as the harness's `make_run_report`
 * does (so a resumed run counts earlier reports), writes `<model>.<run_id>.json` (model of the first
 * prediction, `/` as `__`) and returns it with its path and the harness's summary lines.
 */
export async function writeRunReport(
  options: RunReportOptions,
): Promise<{ report: RunReport; path: string; lines: string[] }> {
  const { predictions, dataset, runId, outputDir } = options;
  const outcomes = readOutcomes(options);
  const failures = classifyFailures([...outcomes.unresolved, ...outcomes.errors], options);
  const report = reportOf(dataset, predictions, outcomes, failures);
  if (options.docker)
    Object.assign(report, await daemonLeftovers(options.docker, options.containerRunId ?? runId, dataset));
  const path = pathInside(outputDir, runReportName([...predictions.values()][0]?.model_name_or_path, runId));
  writeFileAtomic(path, [redact(`${pythonJson(report, 4)}\n`)]);
  return { report, path, lines: summaryLines(report, options) };
}

/** The run report's file name, as the harness names it: `<model with / as __>.<run_id>.json`. */
export function runReportName(model: string | undefined, runId: string): string {
  return `${modelFolderName(model)}.${runId}.json`;
}

/** What became of each instance of the dataset, as the harness sorts them. */
interface Outcomes {
  completed: Set<string>;
  resolved: Set<string>;
  unresolved: Set<string>;
  errors: Set<string>;
  incomplete: Set<string>;
  empty: Set<string>;
}

/**
 * Sorts the dataset's instances: no prediction (incomplete), an empty patch, no report.json or an unreadable
 * one (error), else completed and resolved or not as its report.json says.
 */
function readOutcomes({ predictions, dataset, runId, outputDir }: RunReportOptions): Outcomes {
  const outcomes: Outcomes = {
    completed: new Set(),
    resolved: new Set(),
    unresolved: new Set(),
    errors: new Set(),
    incomplete: new Set(),
    empty: new Set(),
  };
  for (const { instance_id: id } of dataset) {
    const prediction = predictions.get(id);
    if (!prediction) outcomes.incomplete.add(id);
    else if (!prediction.model_patch) outcomes.empty.add(id);
    else {
      const reportPath = join(instanceLogDir(outputDir, runId, prediction), LOG_FILES.report);
      if (!existsSync(reportPath)) outcomes.errors.add(id);
      else {
        outcomes.completed.add(id);
        outcomes[reportedVerdict(reportPath, id)].add(id);
      }
    }
  }
  return outcomes;
}

/** The verdict an instance's report.json holds; an empty or unreadable one, or one without `resolved`, is an error. */
function reportedVerdict(reportPath: string, id: string): "resolved" | "unresolved" | "errors" {
  try {
    const text = readFileSync(reportPath, "utf8").trim();
    if (!text) return "errors";
    const entry = (JSON.parse(text) as Record<string, { resolved?: unknown }>)[id];
    if (entry === undefined || !("resolved" in entry)) return "errors";
    return entry.resolved ? "resolved" : "unresolved";
  } catch {
    return "errors";
  }
}

/** Unresolved and failed instances whose logs show an infrastructure failure, or an ambiguous one, and why. */
function classifyFailures(ids: string[], { predictions, runId, outputDir }: RunReportOptions) {
  const infra = new Set<string>();
  const ambiguous = new Set<string>();
  const reasons: Record<string, string> = {};
  for (const id of ids) {
    const dir = instanceLogDir(outputDir, runId, predictions.get(id) as Prediction);
    // Both logs searched in pieces: a test log of hundreds of MB is never read whole.
    const logs = joinedFileLogs([join(dir, LOG_FILES.testOutput), join(dir, LOG_FILES.instanceLog)]);
    const found = classifyWith((patterns) => firstMatches(logs, patterns).map(Boolean));
    if (!found) continue;
    reasons[id] = found.reason;
    (found.tier === "environment" ? infra : ambiguous).add(id);
  }
  return { infra, ambiguous, reasons };
}

/** The report's counts and sorted id lists, keys in the harness's order. */
function reportOf(
  dataset: RunReportOptions["dataset"],
  predictions: Map<string, Prediction>,
  outcomes: Outcomes,
  { infra, ambiguous, reasons }: ReturnType<typeof classifyFailures>,
): RunReport {
  const { completed, resolved, unresolved, errors, incomplete, empty } = outcomes;
  return {
    total_instances: dataset.length,
    submitted_instances: predictions.size,
    completed_instances: completed.size,
    resolved_instances: resolved.size,
    unresolved_instances: unresolved.size,
    infra_failure_instances: infra.size,
    ambiguous_failure_instances: ambiguous.size,
    empty_patch_instances: empty.size,
    error_instances: errors.size,
    completed_ids: sorted(completed),
    incomplete_ids: sorted(incomplete),
    empty_patch_ids: sorted(empty),
    submitted_ids: sorted(predictions.keys()),
    resolved_ids: sorted(resolved),
    unresolved_ids: sorted(unresolved),
    infra_failure_ids: sorted(infra),
    ambiguous_failure_ids: sorted(ambiguous),
    failure_reasons: Object.fromEntries(
      sorted(Object.keys(reasons)).map((id) => [id, reasons[id] as string]),
    ),
    error_ids: sorted(errors),
    schema_version: 2,
  };
}

/** Containers of the run still on the daemon, and the dataset's images there (as the harness lists them). */
async function daemonLeftovers(
  docker: Docker,
  containerRunId: string,
  dataset: RunReportOptions["dataset"],
): Promise<Pick<RunReport, "unstopped_instances" | "unstopped_containers" | "unremoved_images">> {
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`${CONTAINER_LABELS.runId}=${containerRunId}`] },
  });
  const images = new Set((await docker.listImages({ all: true })).flatMap((image) => image.RepoTags ?? []));
  const unstopped = sorted(
    containers.map((container) => (container.Names[0] ?? container.Id).replace(/^\//, "")),
  );
  return {
    unstopped_instances: unstopped.length,
    unstopped_containers: unstopped,
    unremoved_images: sorted(new Set(dataset.map((row) => row.image).filter((image) => images.has(image)))),
  };
}

/** The harness's summary lines. */
function summaryLines(report: RunReport, { predictions, dataset, docker }: RunReportOptions): string[] {
  const seen = new Set(dataset.map((row) => row.instance_id));
  const lines = [
    `Total instances: ${report.total_instances}`,
    `Instances submitted: ${[...predictions.keys()].filter((id) => seen.has(id)).length}`,
    `Instances completed: ${report.completed_instances}`,
    `Instances incomplete: ${report.incomplete_ids.length}`,
    `Instances resolved: ${report.resolved_instances}`,
    `Instances unresolved: ${report.unresolved_instances}`,
    `Instances with likely infrastructure failures: ${report.infra_failure_instances}`,
    `Instances with ambiguous failures: ${report.ambiguous_failure_instances}`,
    `Instances with empty patches: ${report.empty_patch_instances}`,
    `Instances with errors: ${report.error_instances}`,
  ];
  if (docker)
    lines.push(
      `Unstopped containers: ${report.unstopped_instances}`,
      `Unremoved images: ${report.unremoved_images?.length}`,
    );
  return lines;
}
