#!/usr/bin/env -S node --max-semi-space-size=4
// A 4 MiB young generation keeps a batch process near 90 MiB instead of ~115 (bench/batch.ts) at no measured cost.
import { cac } from "cac";
import { joinDashValues, quoteEmptyValues } from "./util/argv.js";
import { swerunVersion } from "./util/package-root.js";

/** Turns an error into one line and an exit code: 2 for user errors (bad config, flag, file), 1 otherwise. */
async function report(error: unknown): Promise<number> {
  const { redact: redactSecrets } = await import("./util/secrets.js");
  const { printable } = await import("./util/printable.js");
  // A message may quote a file or a flag: its control characters (an ESC) are shown escaped.
  const redact = (text: string) => printable(redactSecrets(text));
  const { UserError } = await import("./errors.js");
  if (error instanceof UserError) {
    process.stderr.write(`swerun: ${redact(error.message)}\n`);
    return 2;
  }
  // cac's own errors (unknown option, missing option value) are bad input too.
  if (error instanceof Error && error.name === "CACError") {
    process.stderr.write(`swerun: ${redact(error.message)} (see swerun --help)\n`);
    return 2;
  }
  const message = error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error);
  process.stderr.write(`swerun: ${redact(message)}\n`);
  if (process.env.SWERUN_DEBUG && error instanceof Error)
    process.stderr.write(`${redact(error.stack ?? "")}\n`);
  return 1;
}

/** Builds the CLI. Each command imports its module only when it runs, so `--help` stays fast. */
export function buildCli(run: (job: () => Promise<number>) => void) {
  const cli = cac("swerun");
  cli
    .command("run", "Run the agent on one task and write its trajectory")
    .option("-t, --task <task>", "The task (asked for on a terminal when missing)")
    .option("-m, --model <name>", "Model name, provider/model (e.g. openai/gpt-5)")
    .option(
      "--model-class <class>",
      "openai (tool calls), openai_textbased, deterministic, or mini-swe-agent names",
    )
    .option("--environment-class <class>", "local or docker")
    .option("-c, --config <spec>", "Config file, built-in config name, or key.path=value (repeatable)")
    .option("-o, --output <path>", "Trajectory path (default: runs/run-<time>.traj.json)")
    .option("-l, --cost-limit <dollars>", "Stop once the run costs this much")
    .option("-y, --yolo", "Run every command without asking")
    .option("--exit-immediately", "Finish when the agent submits, without asking")
    .option("--report <path>", "Write a JSON report of the run (outcome, stats, timeline) when it ends")
    .option("--events <path>", "Append SwarmSDK-shaped JSON events, one per line (- = stdout)")
    .example("swerun run -c demo --yolo")
    .action((flags) => {
      startCommandRunner(flags);
      run(async () =>
        (await import("./commands/run.js")).runCommand({ ...flags, costLimit: numberFlag(flags.costLimit) }),
      );
    });
  cli
    .command("swebench", "Run SWE-bench instances in parallel and keep preds.json up to date")
    .option(
      "--subset <name>",
      "lite, verified, full, multimodal, multilingual, smith, rebench, demo, owner/name, or a .json/.jsonl/.parquet file",
      { default: "lite" },
    )
    .option("--split <split>", "Dataset split", { default: "test" })
    .option("--slice <a:b>", "Python slice of the instances, e.g. 0:10")
    .option("--filter <regex>", "Only instance ids matching this regex (anchored at the start)")
    .option("--shuffle", "Shuffle (sorted by id, then a fixed seed)")
    .option("--instance-ids <ids>", "Comma-separated ids, or a file with one id per line")
    .option("--shard <i/n>", "Only shard i of n of the selected instances (for several machines)")
    .option("-w, --workers <n>", "Parallel workers (default: 1)")
    .option(
      "--docker-host <url[:workers]>",
      "A Docker daemon and its workers, e.g. ssh://gpu-a:8 (repeatable; replaces -w)",
    )
    .option("-o, --output <dir>", "Output folder (default: runs/<time>-<label or model>)")
    .option("-m, --model <name>", "Model name, provider/model")
    .option("--model-class <class>", "Model class")
    .option("--environment-class <class>", "docker (default) or local")
    .option("-c, --config <spec>", "Config file, built-in name, or key.path=value (repeatable)")
    .option("--redo-existing", "Run instances again even when they finished before")
    .option("--label <label>", "A label for this run (in run.json and the default folder name)")
    .option(
      "--image-template <template>",
      "Image name for records without one: {instance_id}, {id_docker_compatible}",
    )
    .option("--repo-dir <dir>", "Local environment: a clone of the repository to make worktrees from")
    .option("-q, --quiet", "Only the final summary")
    .option("-v, --verbose", "Also print every command (without a terminal)")
    .option("--events <path>", "Append SwarmSDK-shaped JSON events, one per line (- = stdout)")
    .option("--eval", "Grade each instance in a fresh container as soon as it ends (SWE-bench 5.x datasets)")
    .option(
      "--image-budget <size>",
      "Disk the images this batch pulls may take per Docker daemon, e.g. 120G (least recently used go first)",
    )
    .option("--pull-workers <n>", "Images pulled ahead at once per Docker daemon (default: 2; 0: none)")
    .option("--keep-image <image>", "Never remove this image (repeatable)")
    .example("swerun swebench --subset demo")
    .action((flags) => run(async () => (await import("./commands/swebench.js")).swebenchCommand(flags)));
  cli
    .command("eval <input>", "Grade predictions (a run folder or a preds file) as the SWE-bench harness does")
    .option(
      "--subset <name>",
      "Dataset with eval_script, log_parser, FAIL_TO_PASS, PASS_TO_PASS (default: the run's, else lite)",
    )
    .option("--split <split>", "Dataset split (default: the run's, else test)")
    .option("-i, --instance-ids <ids>", "Comma-separated ids, or a file with one id per line")
    .option("--filter <regex>", "Only instance ids matching this regex (anchored at the start)")
    .option("-w, --workers <n>", "Parallel gradings", { default: 1 })
    .option("--run-id <id>", "Evaluation run id (default: the run folder's or preds file's name)")
    .option("--timeout <seconds>", "Time limit of each instance's tests", { default: 1800 })
    .option("-o, --output <dir>", "Where logs/ and the run report go (default: <run folder>/eval, or .)")
    .option("--redo", "Grade again instances that have a report.json")
    .option(
      "--regrade",
      "Grade again from the logs alone (no containers; dataset from logs/run_evaluation/<run_id>/run.json unless given)",
    )
    .option(
      "--task-repo <dir>",
      "A SWE-bench task repo: binary patch assets are read from its tasks/<id>/test_assets/ before their URL",
    )
    .option("--keep", "Keep the containers (prints how to enter them)")
    .option("--network <mode>", "Docker network of the grading containers (e.g. none)")
    .option("--image-template <template>", "Image name for records without one")
    .option("-q, --quiet", "Only the final summary")
    .example("swerun eval runs/sonnet-verified --subset verified -w 8")
    .example("swerun eval runs/sonnet-verified --regrade")
    .action((input, flags) =>
      run(async () => (await import("./commands/eval.js")).evalCommand(input, flags)),
    );
  cli
    .command("swebench-single", "Run one SWE-bench instance, interactively by default")
    .option("--subset <name>", "Dataset, as for swebench", { default: "lite" })
    .option("--split <split>", "Dataset split", { default: "test" })
    .option("-i, --instance <id>", "Instance id, or index into the sorted ids")
    .option("-o, --output <dir>", "Output folder (default: runs/single/<id>)")
    .option("-m, --model <name>", "Model name, provider/model")
    .option("--model-class <class>", "Model class")
    .option("--environment-class <class>", "docker (default) or local")
    .option("-c, --config <spec>", "Config file, built-in name, or key.path=value (repeatable)")
    .option(
      "--repo-dir <dir>",
      "Local environment: a clone of the repository; swerun makes a worktree at base_commit",
    )
    .option("--keep", "Keep the local worktree afterwards")
    .option("--image-template <template>", "Image name for records without one")
    .option("--label <label>", "A name for this run in run.json (swerun runs)")
    .option("-y, --yolo", "Run every command without asking")
    .option("--exit-immediately", "Finish when the agent submits, without asking")
    .option("--events <path>", "Append SwarmSDK-shaped JSON events, one per line (- = stdout)")
    .action((flags) =>
      run(async () => (await import("./commands/swebench-single.js")).swebenchSingleCommand(flags)),
    );
  cli
    .command("preds [...paths]", "Rebuild, merge and validate preds.json from run folders or trajectories")
    .option("-o, --output <file>", "Write predictions here (.json object, or .jsonl)")
    .option("--dataset <name>", "Check that every instance id belongs to this dataset (as --subset)")
    .option("--split <split>", "Split of --dataset", { default: "test" })
    .option(
      "--merge-shards",
      "The folders are shards of one run (--shard): check that, and say which are missing",
    )
    .action((paths, flags) =>
      run(async () => (await import("./commands/preds.js")).predsCommand(paths, flags)),
    );
  cli
    .command("replay <trajectory>", "Run a trajectory's commands again and report where the results diverge")
    .option(
      "-c, --config <spec>",
      "Config file, built-in name or key.path=value (repeatable): environment over the recorded one; model and agent for --continue",
    )
    .option("--environment-class <class>", "local or docker (default: the recorded one)")
    .option("--cwd <dir>", "Working directory: the local checkout, or a path in the container")
    .option("--image <image>", "Docker image (default: the recorded one)")
    .option("--until <step>", "Stop replaying after this step")
    .option("--continue", "After the replayed steps, the model from -m/-c carries on")
    .option("-m, --model <name>", "Model for --continue, provider/model (e.g. openai/gpt-5)")
    .option("--model-class <class>", "Model class for --continue")
    .option(
      "-l, --cost-limit <dollars>",
      "Cost limit for --continue, counting the recorded cost of the replayed steps",
    )
    .option("-y, --yolo", "With --continue: run every command without asking")
    .option("--exit-immediately", "With --continue: finish when the agent submits, without asking")
    .option("-o, --output <path>", "The replay's trajectory (default: runs/<name>.replay-<time>.traj.json)")
    .option("--report <path>", "Also write the divergence report as JSON")
    .option("--events <path>", "Append SwarmSDK-shaped JSON events, one per line (- = stdout)")
    .example(
      "swerun replay runs/x/x.traj.json --environment-class local --cwd ./checkout --report report.json",
    )
    .action((trajectory, flags) =>
      run(async () =>
        (await import("./commands/replay.js")).runReplay(trajectory, {
          ...flags,
          costLimit: numberFlag(flags.costLimit),
        }),
      ),
    );
  cli
    .command("report [...paths]", "Build the JSON run report of trajectories or run folders")
    .option("-o, --output <file>", "Write the report here (one trajectory)")
    .option("--out-dir <dir>", "Write <id>.report.json per trajectory into this folder")
    .example("swerun report runs/run-20250101-120000.traj.json -o report.json")
    .action((paths, flags) =>
      run(async () => (await import("./commands/report.js")).reportCommand(paths, flags)),
    );
  cli
    .command(
      "export [...paths]",
      "Export run folders or trajectories for dashboards (summary) or LLM judges (judge)",
    )
    .option("--format <format>", "summary (JSONL) or judge (PATH.md + PATH.full.jsonl)", {
      default: "summary",
    })
    .option("-o, --output <path>", "Output file (summary: default standard output; judge: required)")
    .example("swerun export runs/my-batch --format judge -o judge")
    .action((paths, flags) =>
      run(async () => (await import("./commands/export.js")).exportCommand(paths, flags)),
    );
  cli
    .command(
      "view [...paths]",
      "Write a self-contained HTML page of a run, two runs side by side, or trajectories",
    )
    .option(
      "-o, --output <file>",
      "Page path (default: <run folder>/index.html, or <name>.html next to a trajectory)",
    )
    .option("--open", "Open the page in the default browser")
    .option("--watch", "Rewrite the page whenever the run folder changes (until Ctrl-C)")
    .example("swerun view runs/my-batch --open")
    .action((paths, flags) =>
      run(async () => (await import("./commands/view.js")).viewCommand(paths, flags)),
    );
  cli
    .command(
      "cleanup",
      "Remove Docker containers left behind by crashed swerun runs (--images: images runs pulled)",
    )
    .option("--run-id <id>", "Only containers of this run")
    .option("--all", "Every swerun container, also of live runs and other hosts (kept ones too)")
    .option("--dry-run", "List them without removing")
    .option("--docker-host <url>", "A Docker daemon to clean (repeatable; default: DOCKER_HOST's)")
    .option("--images", "Remove the images swerun batches pulled instead (with --run-id: that run's only)")
    .action((flags) =>
      run(async () =>
        flags.images
          ? (await import("./commands/cleanup-images.js")).cleanupImages(flags)
          : (await import("./commands/cleanup.js")).runCleanup(flags),
      ),
    );
  cli
    .command(
      "runs [action] [...args]",
      "Track runs: list, show <ref>, compare <ref1> <ref2>, label <ref> <label>, delete <ref>",
    )
    .option("--dir <dir>", "Where to look for runs (default: $SWERUN_RUNS_DIR or runs/)")
    .option("--json", "JSON instead of text")
    .option("--force", "delete: do not ask")
    .option("--merge-shards", "Show the shard folders of one run (--shard) as one run")
    .example("swerun runs compare baseline experiment")
    .action((action, args, flags) =>
      run(async () => (await import("./commands/runs.js")).runsCommand(action, args, flags)),
    );
  cli
    .command("config <action> [key] [value]", "Manage API keys in swerun's global config: set, unset, show")
    .action((action, key, value) =>
      run(async () => (await import("./commands/config.js")).runConfigCommand(action, key, value)),
    );
  cli.help();
  cli.version(swerunVersion());
  return cli;
}

/**
 * A local run's commands go through a helper process (environments/spawner.ts): started here, it boots on the
 * other core while the command's modules load. Not for an explicit Docker run, which never uses it.
 */
function startCommandRunner(flags: { environmentClass?: unknown }): void {
  if (flags.environmentClass === "docker") return;
  import("./environments/spawner.js").then(
    (spawner) => spawner.startCommandRunner(),
    () => {},
  );
}

function numberFlag(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : (value as number);
}

/**
 * `-w -3` → `-w=-3`: the parser would read a negative number after an option as an unknown option `-3`;
 * joined, it reaches the option's own check ("--workers: expected a whole number ≥ 1").
 */
function joinNegativeValues(argv: string[]): string[] {
  const result: string[] = [];
  for (const arg of argv) {
    const previous = result.at(-1);
    if (/^-\d/.test(arg) && previous && /^-{1,2}[A-Za-z][\w-]*$/.test(previous))
      result.push(`${result.pop()}=${arg}`);
    else result.push(arg);
  }
  return result;
}

async function main(): Promise<void> {
  let job: (() => Promise<number>) | undefined;
  const cli = buildCli((next) => {
    job = next;
  });
  try {
    cli.parse(joinNegativeValues(joinDashValues(quoteEmptyValues(process.argv))), { run: true });
  } catch (error) {
    process.exitCode = await report(error);
    return;
  }
  if (!job) {
    if (!cli.matchedCommand && cli.args.length > 0) {
      process.stderr.write(`swerun: unknown command "${cli.args[0]}" (see swerun --help)\n`);
      process.exitCode = 2;
    } else if (!cli.options.help && !cli.options.version) {
      cli.outputHelp();
    }
    return;
  }
  try {
    // Everything printed from here on is redacted, and the credentials swerun can find are known first.
    (await import("./util/secrets.js")).guardOutputStreams();
    (await import("./config/keys.js")).registerKnownCredentials();
    process.exitCode = await job();
  } catch (error) {
    process.exitCode = await report(error);
  }
}

await main();
