import { UserError } from "../errors.js";

/** What `docker run` flags become in an Engine API container-create request. */
export interface TranslatedRunArgs {
  hostConfig: {
    AutoRemove?: boolean;
    NetworkMode?: string;
    Binds?: string[];
    Memory?: number;
    NanoCpus?: number;
    Privileged?: boolean;
    Init?: boolean;
    PidsLimit?: number;
  };
  /** `-e` variables, set on the container itself. */
  env: string[];
  labels: Record<string, string>;
  platform?: string;
  user?: string;
}

/** Raised for a run_args entry swerun cannot translate; the message names the flag and the alternatives. */
export class RunArgsError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = "RunArgsError";
  }
}

const SUPPORTED =
  "--rm, --network, --platform, -v/--volume, -e/--env, -m/--memory, --cpus, --pids-limit, -u/--user, -l/--label, --init, --privileged";

const UNITS: Record<string, number> = { "": 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** Docker's memory sizes: `512m`, `2g`, `1.5GB`, `1048576`. */
export function parseMemory(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([bkmgt]?)b?$/i.exec(value.trim());
  const unit = UNITS[match?.[2]?.toLowerCase() ?? ""];
  if (!match || unit === undefined) {
    throw new RunArgsError(`run_args: --memory "${value}" is not a size (use e.g. 512m or 2g)`);
  }
  return Math.round(Number(match[1]) * unit);
}

/** Flags that take a value, by every name they go by. */
const VALUE_FLAGS: Record<string, string> = {
  "--network": "network",
  "--net": "network",
  "--platform": "platform",
  "-v": "volume",
  "--volume": "volume",
  "-e": "env",
  "--env": "env",
  "-m": "memory",
  "--memory": "memory",
  "--cpus": "cpus",
  "--pids-limit": "pids-limit",
  "-u": "user",
  "--user": "user",
  "-l": "label",
  "--label": "label",
};

type RunArgsOptions = { allowPrivileged?: boolean; hostEnv?: NodeJS.ProcessEnv };

/** Sets what a flag without a value asks for; false when `flag` is not one of them. */
function applySwitch(flag: string, result: TranslatedRunArgs, options: RunArgsOptions): boolean {
  if (flag === "--rm") result.hostConfig.AutoRemove = true;
  else if (flag === "--init") result.hostConfig.Init = true;
  else if (flag === "--privileged") {
    if (!options.allowPrivileged) {
      throw new RunArgsError(
        "run_args: --privileged gives the agent's commands full access to the host; set environment.allow_privileged: true to allow it",
      );
    }
    result.hostConfig.Privileged = true;
  } else return false;
  return true;
}

/** `--cpus`: a positive number of CPUs, in billionths. */
function nanoCpus(value: string): number {
  const cpus = Number(value);
  if (!Number.isFinite(cpus) || cpus <= 0) {
    throw new RunArgsError(`run_args: --cpus "${value}" is not a positive number`);
  }
  return Math.round(cpus * 1e9);
}

/** `--pids-limit`, as `docker run` takes it: a positive count, or 0 or -1 for no limit. */
function pidsLimit(value: string): number {
  const limit = Number(value);
  if (!/^-?\d+$/.test(value.trim()) || limit < -1) {
    throw new RunArgsError(
      `run_args: --pids-limit "${value}" is not a process count (use e.g. 512, or -1 for no limit)`,
    );
  }
  return limit;
}

/** What each flag with a value sets, by its kind (see VALUE_FLAGS). */
const APPLY_VALUE: Record<
  string,
  (result: TranslatedRunArgs, value: string, hostEnv: NodeJS.ProcessEnv) => void
> = {
  network: (result, value) => {
    result.hostConfig.NetworkMode = value;
  },
  platform: (result, value) => {
    result.platform = value;
  },
  volume: (result, value) => {
    if (!value.includes(":")) {
      throw new RunArgsError(`run_args: volume "${value}" needs the form host-path:container-path[:ro]`);
    }
    result.hostConfig.Binds = [...(result.hostConfig.Binds ?? []), value];
  },
  // `NAME=value`, or `NAME` for the host's value (left out when the host has none).
  env: (result, value, hostEnv) => {
    if (value.includes("=")) result.env.push(value);
    else if (hostEnv[value] !== undefined) result.env.push(`${value}=${hostEnv[value]}`);
  },
  memory: (result, value) => {
    result.hostConfig.Memory = parseMemory(value);
  },
  cpus: (result, value) => {
    result.hostConfig.NanoCpus = nanoCpus(value);
  },
  "pids-limit": (result, value) => {
    result.hostConfig.PidsLimit = pidsLimit(value);
  },
  user: (result, value) => {
    result.user = value;
  },
  label: (result, value) => {
    const at = value.indexOf("=");
    result.labels[at < 0 ? value : value.slice(0, at)] = at < 0 ? "" : value.slice(at + 1);
  },
};

/**
 * Translates mini-swe-agent's `run_args` (docker run flags) into container-create options. Common flags
 * only: anything else is refused with a message pointing at `container_options`.
 */
export function translateRunArgs(args: readonly string[], options: RunArgsOptions = {}): TranslatedRunArgs {
  const hostEnv = options.hostEnv ?? process.env;
  const result: TranslatedRunArgs = { hostConfig: {}, env: [], labels: {} };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? "";
    const equals = arg.startsWith("-") ? arg.indexOf("=") : -1;
    const flag = equals > 0 ? arg.slice(0, equals) : arg;
    if (equals < 0 && applySwitch(flag, result, options)) continue;
    const kind = VALUE_FLAGS[flag];
    const apply = kind === undefined ? undefined : APPLY_VALUE[kind];
    if (!apply) {
      throw new RunArgsError(
        `run_args: "${arg}" is not supported (swerun translates ${SUPPORTED}); set Engine API options in environment.container_options instead`,
      );
    }
    let value: string;
    if (equals > 0) value = arg.slice(equals + 1);
    else {
      const next = args[index + 1];
      if (next === undefined) throw new RunArgsError(`run_args: ${flag} needs a value`);
      value = next;
      index++;
    }
    apply(result, value, hostEnv);
  }
  return result;
}
