import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** A trajectory found in a run folder; `running` when it is the `.partial` of an instance still going. */
export interface FolderTrajectory {
  path: string;
  running: boolean;
}

/**
 * A run folder's trajectories, sorted by path: `<dir>/<id>/<id>.traj.json` (a batch, swerun's or
 * mini-swe-agent's), with `partial` the `.partial` an instance still running writes, and `<dir>/<id>.traj.json`
 * (swebench-single's folder, or its instance added to a batch's). Dot-entries and `eval/` are left out.
 */
export function folderTrajectories(dir: string, options: { partial?: boolean } = {}): FolderTrajectory[] {
  const found: FolderTrajectory[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || entry.name === "eval") continue;
    if (entry.isFile() && entry.name.endsWith(".traj.json")) {
      found.push({ path: join(dir, entry.name), running: false });
      continue;
    }
    if (!entry.isDirectory()) continue;
    const path = join(dir, entry.name, `${entry.name}.traj.json`);
    if (existsSync(path)) found.push({ path, running: false });
    else if (options.partial && existsSync(`${path}.partial`))
      found.push({ path: `${path}.partial`, running: true });
  }
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
