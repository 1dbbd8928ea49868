#!/usr/bin/env -S node --max-semi-space-size=4
// A 4 MiB young generation keeps a batch process near 90 MiB instead of ~115 (bench/batch.ts) at no measured cost.
import { cac } from "cac";
import type { CommandName } from "./commands/option-table.js";
import { addOptions, type FlagsOf, typedFlags } from "./commands/options.js";
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
  // A file that could not be written (a full disk) names itself: `could not write <file>: <why> (<code>)`.
  const { FileWriteError } = await import("./util/file-error.js");
  const message =
    error instanceof FileWriteError
      ? error.message
      : error instanceof Error
        ? `${error.constructor.name}: ${error.message}`
        : String(error);
  process.stderr.write(`swerun: ${redact(message)}\n`);
  if (process.env.SWERUN_DEBUG && error instanceof Error)
    process.stderr.write(`${redact(error.stack ?? "")}\n`);
  return 1;
}

/** A command: its arguments (cac's syntax), description, examples, and the job it runs with its typed flags. */
interface CommandSpec<C extends CommandName = CommandName> {
  name: C;
  /** Its positional arguments, e.g. `<input>` or `[...paths]`, handed to the job in order. */
  args?: string;
  description: string;
  examples?: string[];
  /** Called as soon as the command is parsed, before its job runs. */
  onParse?: (flags: FlagsOf<C>) => void;
  /** Imports the command's module (only when it runs, so `--help` stays fast) and runs it. */
  job: (args: unknown[], flags: FlagsOf<C>) => Promise<number>;
}

/** A command of the table below, its job typed by the command's flags. */
function command<C extends CommandName>(spec: CommandSpec<C>): CommandSpec {
  return spec as unknown as CommandSpec;
}

/** The commands, in the order `swerun --help` lists them; their options are in commands/options.ts. */
const COMMANDS: CommandSpec[] = [
  command({
    name: "run",
    description: "Run the agent on one task and write its trajectory",
    examples: ["swerun run -c demo --yolo"],
    onParse: startCommandRunner,
    job: async (_, flags) => (await import("./commands/run.js")).runCommand(flags),
  }),
  command({
    name: "swebench",
    description: "Run SWE-bench instances in parallel and keep preds.json up to date",
    examples: ["swerun swebench --subset demo"],
    job: async (_, flags) => (await import("./commands/swebench.js")).swebenchCommand(flags),
  }),
  command({
    name: "eval",
    args: "<input>",
    description: "Grade predictions (a run folder or a preds file) as the SWE-bench harness does",
    examples: [
      "swerun eval runs/sonnet-verified --subset verified -w 8",
      "swerun eval runs/sonnet-verified --regrade",
    ],
    job: async ([input], flags) => (await import("./commands/eval.js")).evalCommand(input as string, flags),
  }),
  command({
    name: "swebench-single",
    description: "Run one SWE-bench instance, interactively by default",
    job: async (_, flags) => (await import("./commands/swebench-single.js")).swebenchSingleCommand(flags),
  }),
  command({
    name: "preds",
    args: "[...paths]",
    description: "Rebuild, merge and validate preds.json from run folders or trajectories",
    job: async ([paths], flags) =>
      (await import("./commands/preds.js")).predsCommand(paths as string[], flags),
  }),
  command({
    name: "replay",
    args: "<trajectory>",
    description: "Run a trajectory's commands again and report where the results diverge",
    examples: [
      "swerun replay runs/x/x.traj.json --environment-class local --cwd ./checkout --report report.json",
    ],
    job: async ([path], flags) => (await import("./commands/replay.js")).runReplay(path as string, flags),
  }),
  command({
    name: "report",
    args: "[...paths]",
    description: "Build the JSON run report of trajectories or run folders",
    examples: ["swerun report runs/run-20250101-120000.traj.json -o report.json"],
    job: async ([paths], flags) =>
      (await import("./commands/report.js")).reportCommand(paths as string[], flags),
  }),
  command({
    name: "export",
    args: "[...paths]",
    description: "Export run folders or trajectories for dashboards (summary) or LLM judges (judge)",
    examples: ["swerun export runs/my-batch --format judge -o judge"],
    job: async ([paths], flags) =>
      (await import("./commands/export.js")).exportCommand(paths as string[], flags),
  }),
  command({
    name: "view",
    args: "[...paths]",
    description: "Write a self-contained HTML page of a run, two runs side by side, or trajectories",
    examples: ["swerun view runs/my-batch --open"],
    job: async ([paths], flags) => (await import("./commands/view.js")).viewCommand(paths as string[], flags),
  }),
  command({
    name: "cleanup",
    description:
      "Remove Docker containers (--kubernetes: pods) left behind by crashed swerun runs (--images: images runs pulled)",
    job: async (_, flags) =>
      flags.images
        ? (await import("./commands/cleanup-images.js")).cleanupImages(flags)
        : (await import("./commands/cleanup.js")).runCleanup(flags),
  }),
  command({
    name: "runs",
    args: "[action] [...args]",
    description: "Track runs: list, show <ref>, compare <ref1> <ref2>, label <ref> <label>, delete <ref>",
    examples: ["swerun runs compare baseline experiment"],
    job: async ([action, args], flags) =>
      (await import("./commands/runs.js")).runsCommand(action as string | undefined, args as string[], flags),
  }),
  command({
    name: "config",
    args: "<action> [key] [value]",
    description: "Manage API keys in swerun's global config: set, unset, show",
    job: async ([action, key, value]) =>
      (await import("./commands/config.js")).runConfigCommand(
        action as string,
        key as string | undefined,
        value as string | undefined,
      ),
  }),
];

/**
 * Builds the CLI from the command table; `run` receives the job of the command that matched. With `only`
 * (the command named on the command line) just that command is declared: its parse and its `--help` are
 * the same, and declaring the other commands' options was ~2 ms of a short run's start (bench/lean.ts).
 */
export function buildCli(run: (job: () => Promise<number>) => void, only?: string) {
  const cli = cac("swerun");
  const declared = COMMANDS.some((spec) => spec.name === only)
    ? COMMANDS.filter((spec) => spec.name === only)
    : COMMANDS;
  for (const spec of declared) {
    const command = cli.command(spec.args ? `${spec.name} ${spec.args}` : spec.name, spec.description);
    addOptions(command, spec.name);
    for (const example of spec.examples ?? []) command.example(example);
    command.action((...parsed: unknown[]) => {
      // cac passes the positional arguments, then the options.
      const flags = typedFlags(spec.name, parsed.pop() as Record<string, unknown>, cli.rawArgs);
      spec.onParse?.(flags);
      run(() => spec.job(parsed, flags));
    });
  }
  cli.help();
  cli.version(swerunVersion());
  return cli;
}

/**
 * A local run's commands go through a helper process (environments/spawner.ts): started here, it boots on the
 * other core while the command's modules load. Not for an explicit Docker or Kubernetes run, which never uses it.
 */
function startCommandRunner(flags: { environmentClass?: unknown }): void {
  if (flags.environmentClass === "docker" || flags.environmentClass === "kubernetes") return;
  import("./environments/spawner.js").then(
    (spawner) => spawner.startCommandRunner(),
    () => {},
  );
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
  }, process.argv[2]);
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

void main();
