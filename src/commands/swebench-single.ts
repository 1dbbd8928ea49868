import { join, resolve } from "node:path";
import pc from "picocolors";
import { Agent } from "../agent/agent.js";
import { TerminalInteraction } from "../console/interaction.js";
import { consolePrinter } from "../console/printer.js";
import type { Environment } from "../environments/environment.js";
import { createEnvironment } from "../environments/index.js";
import { UserError } from "../errors.js";
import { EventBus } from "../events.js";
import { createModel } from "../models/index.js";
import type { Checkout } from "../swebench/checkout.js";
import type { Instance } from "../swebench/dataset.js";
import { PredictionsFile } from "../swebench/predictions.js";
import { newRunId } from "../util/ids.js";
import { agentSignals } from "./signals.js";
import { datasetDirOf, instancePreparer, loadSwebench, type SwebenchFlags } from "./swebench.js";

export interface SingleFlags extends SwebenchFlags {
  instance?: string;
  yolo?: boolean;
  keep?: boolean;
  exitImmediately?: boolean;
}

/** `-i`: an instance id, or an index into the sorted ids. */
export function pickInstance(instances: Instance[], selector: string | undefined): Instance {
  if (selector === undefined) throw new UserError("give the instance with -i <instance id or index>");
  const byId = instances.find((instance) => instance.instance_id === selector);
  if (byId) return byId;
  if (/^-?\d+$/.test(selector)) {
    const sorted = [...instances].sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1));
    const index = Number(selector);
    const picked = sorted.at(index);
    if (picked) return picked;
    throw new UserError(`-i ${selector}: index out of range (the dataset has ${instances.length} instances)`);
  }
  throw new UserError(`-i ${selector}: no instance with that id`);
}

/** `swerun swebench-single`: one instance, interactive by default, trajectory and a one-entry preds.json. */
export async function swebenchSingleCommand(flags: SingleFlags): Promise<number> {
  const { subset, config, instances } = await loadSwebench({ ...flags, slice: undefined, filter: undefined });
  const instance = pickInstance(instances, flags.instance);
  const id = instance.instance_id;
  const tty = Boolean(process.stdin.isTTY);
  config.agent.mode =
    flags.yolo || !tty ? "yolo" : config.agent.mode === "yolo" ? "confirm" : config.agent.mode;
  if (flags.exitImmediately) config.agent.confirm_exit = false;
  const outputDir = resolve(flags.output ?? join("runs", "single", id));
  config.agent.output_path = join(outputDir, `${id}.traj.json`);
  if (config.model.model_class === "deterministic" && Array.isArray(instance.swerun_scripted_outputs)) {
    config.model.outputs = instance.swerun_scripted_outputs as Array<Record<string, unknown>>;
  }
  const prepare = instancePreparer(flags, datasetDirOf(subset));
  const checkout: Checkout | undefined = await prepare(config, instance);
  const bus = new EventBus();
  bus.subscribe(consolePrinter({ color: Boolean(process.stdout.isTTY) }));
  let agent: Agent | undefined;
  const signals = agentSignals(() => agent, tty);
  let env: Environment | undefined;
  try {
    env = await createEnvironment(config.environment, { runId: newRunId(), instanceId: id });
    const model = await createModel(config.model, { emit: (event) => bus.emit(event) });
    const interaction = tty
      ? new TerminalInteraction(config.agent.mode, config.agent.whitelist_actions, undefined, signals.reset)
      : undefined;
    agent = new Agent({ model, env, config: config.agent, bus, interaction, extras: { instance_id: id } });
    const result = await agent.run(instance.problem_statement, { instance_id: id });
    const preds = new PredictionsFile(join(outputDir, "preds.json"));
    preds.set({
      model_name_or_path: config.model.model_name || config.model.model_class,
      instance_id: id,
      model_patch: String(result.submission ?? ""),
    });
    process.stdout.write(`${pc.bold("exit status:")} ${String(result.exit_status)}\n`);
    process.stdout.write(`${pc.bold("trajectory:")} ${config.agent.output_path}\n`);
    process.stdout.write(`${pc.bold("predictions:")} ${preds.path}\n`);
    if (checkout && flags.keep) process.stdout.write(`${pc.bold("checkout kept:")} ${checkout.dir}\n`);
    return 0;
  } finally {
    signals.dispose();
    await env?.close();
    if (checkout && !flags.keep) checkout.remove();
  }
}
