import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { UserError } from "../errors.js";
import { checkInstanceId, type Instance } from "./dataset.js";

/** Dataset columns a task repo keeps as files of their own in `tasks/<id>/`. */
const AS_FILE = {
  patch: "gold.patch",
  test_patch: "test.patch",
  eval_script: "eval.sh",
  problem_statement: "problem_statement.md",
} as const;

/**
 * The instances of a SWE-bench 5.x task repo (`tasks/<id>/task.yaml`, `tests.json`, `eval.sh`, the patches and
 * the problem statement), as the harness reads one with `--task-repo`: the named ids from any split (an unknown
 * id is an error), else every task of `split` (none: an error naming the splits it has).
 */
export function loadTaskRepo(repo: string, split: string, instanceIds?: string[]): Instance[] {
  const root = join(repo, "tasks");
  if (!existsSync(root)) throw new UserError(`--task-repo ${repo}: not a task repo (no tasks/ folder)`);
  const dirs = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, entry.name, "task.yaml")))
    .map((entry) => entry.name)
    .sort();
  if (instanceIds && instanceIds.length > 0) {
    const missing = instanceIds.filter((id) => !dirs.includes(id)).sort();
    if (missing.length > 0) throw new UserError(`not in ${root}: ${missing.join(" ")}`);
    return instanceIds.map((id) => loadTask(join(root, id)));
  }
  const tasks = dirs.map((id) => loadTask(join(root, id)));
  const wanted = tasks.filter((task) => task.split === split);
  if (wanted.length === 0) {
    const splits = [...new Set(tasks.map((task) => task.split).filter((s) => typeof s === "string"))].sort();
    throw new UserError(
      `${repo} has no tasks in split ${JSON.stringify(split)}. It has: ${splits.join(" ") || "none"}`,
    );
  }
  return wanted;
}

/** One task folder as the instance the harness reads (files kept byte for byte, CRLF included). */
function loadTask(dir: string): Instance {
  const where = (file: string) => join(dir, file);
  let task: unknown;
  try {
    task = parseYaml(readFileSync(where("task.yaml"), "utf8"));
  } catch (error) {
    throw new UserError(`${where("task.yaml")}: ${(error as Error).message.split("\n")[0]}`);
  }
  if (typeof task !== "object" || task === null || Array.isArray(task))
    throw new UserError(`${where("task.yaml")}: expected a mapping`);
  const instance: Record<string, unknown> = { ...(task as Record<string, unknown>) };
  for (const [column, file] of Object.entries(AS_FILE)) {
    if (!existsSync(where(file))) throw new UserError(`${dir}: no ${file}`);
    instance[column] = readFileSync(where(file), "utf8");
  }
  instance.hints_text = existsSync(where("hints.md")) ? readFileSync(where("hints.md"), "utf8") : "";
  try {
    Object.assign(instance, JSON.parse(readFileSync(where("tests.json"), "utf8")));
  } catch (error) {
    throw new UserError(`${where("tests.json")}: ${(error as Error).message}`);
  }
  if (typeof instance.instance_id !== "string") instance.instance_id = dir.split("/").at(-1);
  checkInstanceId(String(instance.instance_id), where("task.yaml"));
  return instance as Instance;
}
