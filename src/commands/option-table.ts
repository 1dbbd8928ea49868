/**
 * One command-line option, declared once: its flag, the type of its value, its help, and the config key it
 * sets. `cli.ts` registers it with cac, `FlagsOf` types it, and `configOverrides` turns it into an override.
 */
export interface OptionSpec {
  /** cac's syntax: short alias, long name, value placeholder (`-l, --cost-limit <dollars>`); no `<...>`: a switch. */
  readonly flag: string;
  readonly help: string;
  /**
   * `number`: the value is read as a number (text that is not one is passed on as given, for the command's check
   * to quote); `list`: repeatable, one value or several. Otherwise text, or true for a switch.
   */
  readonly type?: "number" | "list";
  /** The config key the option overrides: with its value, or with `configValue` when it is a switch. */
  readonly config?: string;
  readonly configValue?: unknown;
  /** A value cac fills in when the option is not given (`--help` shows it). */
  readonly default?: string | number;
  /** The help in a command where the option says something narrower (replay's options for `--continue`). */
  readonly helpIn?: { readonly [command: string]: string };
}

/**
 * Every option of the CLI. Options that several commands share come first; the others follow, grouped by
 * command. The key is the option's id; the flags property is the long name in camelCase (`--cost-limit` →
 * `costLimit`), so several ids can declare an `-o, --output` that means something else in each command.
 */
export const OPTIONS = {
  model: {
    flag: "-m, --model <name>",
    help: "Model name, provider/model (e.g. openai/gpt-5)",
    config: "model.model_name",
    helpIn: { replay: "Model for --continue, provider/model (e.g. openai/gpt-5)" },
  },
  modelClass: {
    flag: "--model-class <class>",
    help: "openai (tool calls), openai_textbased, deterministic, or mini-swe-agent names",
    config: "model.model_class",
    helpIn: { replay: "Model class for --continue" },
  },
  environmentClass: {
    flag: "--environment-class <class>",
    help: "local, docker, bubblewrap or kubernetes",
    config: "environment.environment_class",
    helpIn: {
      swebench: "docker (default), kubernetes, local or bubblewrap",
      "swebench-single": "docker (default), kubernetes, local or bubblewrap",
      replay: "local, docker or bubblewrap (default: the recorded one)",
    },
  },
  config: {
    flag: "-c, --config <spec>",
    help: "Config file, built-in name, or key.path=value (repeatable)",
    type: "list",
    helpIn: {
      replay:
        "Config file, built-in name or key.path=value (repeatable): environment over the recorded one; model and agent for --continue",
    },
  },
  costLimit: {
    flag: "-l, --cost-limit <dollars>",
    help: "Stop once the run costs this much",
    type: "number",
    config: "agent.cost_limit",
    helpIn: { replay: "Cost limit for --continue, counting the recorded cost of the replayed steps" },
  },
  yolo: {
    flag: "-y, --yolo",
    help: "Run every command without asking",
    config: "agent.mode",
    configValue: "yolo",
    helpIn: { replay: "With --continue: run every command without asking" },
  },
  exitImmediately: {
    flag: "--exit-immediately",
    help: "Finish when the agent submits, without asking",
    config: "agent.confirm_exit",
    configValue: false,
    helpIn: { replay: "With --continue: finish when the agent submits, without asking" },
  },
  keepWorkdir: {
    flag: "--keep-workdir",
    help: "Keep the temporary copy of run.setup_dir (the demo's project) the agent worked in; by default it is removed at the end",
  },
  events: {
    flag: "--events <path>",
    help: "Append SwarmSDK-shaped JSON events, one per line (- = stdout)",
  },
  subset: {
    flag: "--subset <name>",
    help: "lite, verified, full, multimodal, multilingual, smith, rebench, demo, owner/name, or a .json/.jsonl/.parquet file",
    default: "lite",
  },
  split: {
    flag: "--split <split>",
    help: "Dataset split",
    default: "test",
    helpIn: { preds: "Split of --dataset" },
  },
  instanceIds: {
    flag: "-i, --instance-ids <ids>",
    help: "Comma-separated ids, or a file with one id per line",
  },
  filter: { flag: "--filter <regex>", help: "Only instance ids matching this regex (anchored at the start)" },
  workers: {
    flag: "-w, --workers <n>",
    help: "Parallel workers (default: 1)",
    type: "number",
    helpIn: { eval: "Parallel gradings (default: 1)" },
  },
  imageTemplate: {
    flag: "--image-template <template>",
    help: "Image name for records without one: {instance_id}, {id_docker_compatible}",
  },
  repoDir: {
    flag: "--repo-dir <dir>",
    help: "Local environment: a clone of the repository; swerun makes a worktree at each instance's base_commit",
  },
  label: {
    flag: "--label <label>",
    help: "A label for this run (in run.json and the default folder name)",
    helpIn: { "swebench-single": "A label for this run (in run.json, for swerun runs)" },
  },
  quiet: { flag: "-q, --quiet", help: "Only the final summary" },
  mergeShards: {
    flag: "--merge-shards",
    help: "The folders are shards of one run (--shard): check that, and say which are missing",
    helpIn: { runs: "Show the shard folders of one run (--shard) as one run" },
  },

  // swerun run
  task: { flag: "-t, --task <task>", help: "The task (asked for on a terminal when missing)" },
  trajectory: {
    flag: "-o, --output <path>",
    help: "Trajectory path (default: runs/run-<time>.traj.json)",
    config: "agent.output_path",
  },
  runReport: {
    flag: "--report <path>",
    help: "Write a JSON report of the run (outcome, stats, timeline) when it ends",
  },

  // swerun swebench
  slice: { flag: "--slice <a:b>", help: "Python slice of the instances, e.g. 0:10" },
  shuffle: { flag: "--shuffle", help: "Shuffle (sorted by id, then a fixed seed)" },
  shard: {
    flag: "--shard <i/n>",
    help: "Only shard i of n of the selected instances (for several machines)",
  },
  dockerHosts: {
    flag: "--docker-host <url[:workers]>",
    help: "A Docker daemon and its workers, e.g. ssh://gpu-a:8 (repeatable; replaces -w)",
    type: "list",
  },
  batchFolder: { flag: "-o, --output <dir>", help: "Output folder (default: runs/<time>-<label or model>)" },
  redoExisting: { flag: "--redo-existing", help: "Run instances again even when they finished before" },
  verbose: { flag: "-v, --verbose", help: "Also print every command (without a terminal)" },
  eval: {
    flag: "--eval",
    help: "Grade each instance in a fresh container as soon as it ends (SWE-bench 5.x datasets)",
  },
  imageBudget: {
    flag: "--image-budget <size>",
    help: "Disk the images this batch pulls may take per Docker daemon, e.g. 120G (least recently used go first)",
  },
  pullWorkers: {
    flag: "--pull-workers <n>",
    help: "Images pulled ahead at once per Docker daemon (default: 2; 0: none)",
    type: "number",
  },
  keepImage: { flag: "--keep-image <image>", help: "Never remove this image (repeatable)", type: "list" },

  // swerun eval
  evalSubset: {
    flag: "--subset <name>",
    help: "Dataset with eval_script, log_parser, FAIL_TO_PASS, PASS_TO_PASS (default: the run's, else lite)",
  },
  evalSplit: { flag: "--split <split>", help: "Dataset split (default: the run's, else test)" },
  evalRunId: {
    flag: "--run-id <id>",
    help: "Evaluation run id (default: the run folder's or preds file's name)",
  },
  timeout: {
    flag: "--timeout <seconds>",
    help: "Time limit of each instance's tests",
    type: "number",
    default: 1800,
  },
  evalFolder: {
    flag: "-o, --output <dir>",
    help: "Where logs/ and the run report go (default: <run folder>/eval, or .)",
  },
  redo: { flag: "--redo", help: "Grade again instances that have a report.json" },
  regrade: {
    flag: "--regrade",
    help: "Grade again from the logs alone (no containers; dataset from logs/run_evaluation/<run_id>/run.json unless given)",
  },
  taskRepo: {
    flag: "--task-repo <dir>",
    help: "A SWE-bench task repo: binary patch assets are read from its tasks/<id>/test_assets/ before their URL",
  },
  keepContainers: { flag: "--keep", help: "Keep the containers (prints how to enter them)" },
  network: { flag: "--network <mode>", help: "Docker network of the grading containers (e.g. none)" },

  // swerun swebench-single
  instance: { flag: "-i, --instance <id>", help: "Instance id, or index into the sorted ids" },
  singleFolder: { flag: "-o, --output <dir>", help: "Output folder (default: runs/single/<id>)" },
  keepWorktree: { flag: "--keep", help: "Keep the local worktree afterwards" },

  // swerun preds
  predsFile: { flag: "-o, --output <file>", help: "Write predictions here (.json object, or .jsonl)" },
  dataset: {
    flag: "--dataset <name>",
    help: "Check that every instance id belongs to this dataset (as --subset)",
  },

  // swerun replay
  cwd: {
    flag: "--cwd <dir>",
    help: "Working directory: the local checkout, or a path in the container",
    config: "environment.cwd",
  },
  image: {
    flag: "--image <image>",
    help: "Docker image (default: the recorded one)",
    config: "environment.image",
  },
  until: { flag: "--until <step>", help: "Stop replaying after this step", type: "number" },
  continue: { flag: "--continue", help: "After the replayed steps, the model from -m/-c carries on" },
  replayTrajectory: {
    flag: "-o, --output <path>",
    help: "The replay's trajectory (default: runs/<name>.replay-<time>.traj.json)",
  },
  replayReport: { flag: "--report <path>", help: "Also write the divergence report as JSON" },

  // swerun report
  reportFile: { flag: "-o, --output <file>", help: "Write the report here (one trajectory)" },
  outDir: { flag: "--out-dir <dir>", help: "Write <id>.report.json per trajectory into this folder" },

  // swerun export
  format: {
    flag: "--format <format>",
    help: "summary (JSONL) or judge (PATH.md + PATH.full.jsonl)",
    default: "summary",
  },
  exportFile: {
    flag: "-o, --output <path>",
    help: "Output file (summary: default standard output; judge: required)",
  },

  // swerun view
  page: {
    flag: "-o, --output <file>",
    help: "Page path (default: <run folder>/index.html, or <name>.html next to a trajectory)",
  },
  open: { flag: "--open", help: "Open the page in the default browser" },
  watch: { flag: "--watch", help: "Rewrite the page whenever the run folder changes (until Ctrl-C)" },

  // swerun cleanup
  cleanupRunId: { flag: "--run-id <id>", help: "Only containers of this run" },
  all: { flag: "--all", help: "Every swerun container, also of live runs and other hosts (kept ones too)" },
  dryRun: { flag: "--dry-run", help: "List them without removing" },
  cleanupHosts: {
    flag: "--docker-host <url>",
    help: "A Docker daemon to clean (repeatable; default: DOCKER_HOST's)",
    type: "list",
  },
  kubernetes: {
    flag: "--kubernetes",
    help: "Delete the pods (and run ConfigMaps) swerun runs left on the Kubernetes cluster instead",
  },
  namespace: { flag: "--namespace <name>", help: "--kubernetes: the namespace (default: the context's)" },
  kubeContext: {
    flag: "--kube-context <name>",
    help: "--kubernetes: the kubeconfig context (default: current)",
  },
  images: {
    flag: "--images",
    help: "Remove the images swerun batches pulled instead (with --run-id: that run's only)",
  },

  // swerun runs
  dir: { flag: "--dir <dir>", help: "Where to look for runs (default: $SWERUN_RUNS_DIR or runs/)" },
  json: { flag: "--json", help: "JSON instead of text" },
  force: { flag: "--force", help: "delete: do not ask" },
} as const satisfies Record<string, OptionSpec>;

export type OptionId = keyof typeof OPTIONS;

/** The options of each command, in the order `--help` lists them. */
export const COMMAND_OPTIONS = {
  run: [
    "task",
    "model",
    "modelClass",
    "environmentClass",
    "config",
    "trajectory",
    "costLimit",
    "yolo",
    "exitImmediately",
    "runReport",
    "keepWorkdir",
    "events",
  ],
  swebench: [
    "subset",
    "split",
    "slice",
    "filter",
    "shuffle",
    "instanceIds",
    "shard",
    "workers",
    "dockerHosts",
    "batchFolder",
    "model",
    "modelClass",
    "environmentClass",
    "config",
    "redoExisting",
    "label",
    "imageTemplate",
    "repoDir",
    "quiet",
    "verbose",
    "events",
    "eval",
    "imageBudget",
    "pullWorkers",
    "keepImage",
  ],
  eval: [
    "evalSubset",
    "evalSplit",
    "instanceIds",
    "filter",
    "workers",
    "evalRunId",
    "timeout",
    "evalFolder",
    "redo",
    "regrade",
    "taskRepo",
    "keepContainers",
    "network",
    "imageTemplate",
    "quiet",
  ],
  "swebench-single": [
    "subset",
    "split",
    "instance",
    "singleFolder",
    "model",
    "modelClass",
    "environmentClass",
    "config",
    "repoDir",
    "keepWorktree",
    "imageTemplate",
    "label",
    "yolo",
    "exitImmediately",
    "events",
  ],
  preds: ["predsFile", "dataset", "split", "mergeShards"],
  replay: [
    "config",
    "environmentClass",
    "cwd",
    "image",
    "until",
    "continue",
    "model",
    "modelClass",
    "costLimit",
    "yolo",
    "exitImmediately",
    "replayTrajectory",
    "replayReport",
    "keepWorkdir",
    "events",
  ],
  report: ["reportFile", "outDir"],
  export: ["format", "exportFile"],
  view: ["page", "open", "watch"],
  cleanup: [
    "cleanupRunId",
    "all",
    "dryRun",
    "cleanupHosts",
    "kubernetes",
    "namespace",
    "kubeContext",
    "images",
  ],
  runs: ["dir", "json", "force", "mergeShards"],
  config: [],
} as const satisfies Record<string, readonly OptionId[]>;

export type CommandName = keyof typeof COMMAND_OPTIONS;
