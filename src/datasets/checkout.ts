import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { UserError } from "../errors.js";
import { pathInside } from "../util/safe-path.js";
import type { Instance } from "./dataset.js";

/** A working copy of an instance's repository on this machine, for the local environment. */
export interface Checkout {
  dir: string;
  /** Removes the checkout (a worktree is also unregistered from its repository). */
  remove: () => void;
}

const GIT_IDENTITY = ["-c", "user.name=swerun", "-c", "user.email=swerun@example.invalid"];

function git(args: string[], cwd: string): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/**
 * A bundled instance's repository (`fixture`, a folder next to its dataset file) copied into a fresh
 * temporary directory and committed, so `git diff` shows exactly the agent's changes.
 */
export function materializeFixture(instance: Instance, datasetDir: string): Checkout {
  const fixture = resolve(pathInside(datasetDir, String(instance.fixture)));
  if (!existsSync(fixture))
    throw new UserError(`${instance.instance_id}: fixture folder not found: ${fixture}`);
  const dir = mkdtempSync(join(tmpdir(), "swerun-checkout-"));
  cpSync(fixture, dir, { recursive: true });
  git(["init", "-q"], dir);
  git(["add", "-A"], dir);
  git([...GIT_IDENTITY, "commit", "-qm", `${instance.instance_id}: base`], dir);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A clean worktree of `repoDir` at the instance's `base_commit`, in a temporary directory. */
export function worktreeAtBase(instance: Instance, repoDir: string): Checkout {
  const base = String(instance.base_commit ?? "");
  if (!base) throw new UserError(`${instance.instance_id}: the record has no base_commit to check out`);
  const repo = resolve(repoDir);
  try {
    git(["rev-parse", "--git-dir"], repo);
  } catch {
    throw new UserError(`--repo-dir ${repo}: not a git repository`);
  }
  try {
    git(["cat-file", "-e", `${base}^{commit}`], repo);
  } catch {
    throw new UserError(
      `--repo-dir ${repo}: commit ${base} of ${instance.instance_id} is not in this clone (git fetch it first)`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "swerun-worktree-"));
  git(["worktree", "add", "--detach", "-q", dir, base], repo);
  return {
    dir,
    remove: () => {
      try {
        git(["worktree", "remove", "--force", dir], repo);
      } catch {
        rmSync(dir, { recursive: true, force: true });
        git(["worktree", "prune"], repo);
      }
    },
  };
}
