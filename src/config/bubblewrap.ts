import * as z from "zod/mini";
import { environmentBase, VARIABLE_NAME } from "./common.js";
import { lookupSetting } from "./keys.js";

/**
 * mini-swe-agent's default `wrapper_args`: the host's /usr, /bin, /lib, /lib64 and /etc read-only, a fresh
 * /tmp, /proc and /dev, a user namespace where the kernel allows one, a new session, and a fixed PATH.
 * Everything else of the host (home directories, /root, /var, /opt, /srv, ...) is not there at all.
 */
export const DEFAULT_WRAPPER_ARGS: readonly string[] = [
  "--unshare-user-try",
  ...["--ro-bind", "/usr", "/usr"],
  ...["--ro-bind", "/bin", "/bin"],
  ...["--ro-bind", "/lib", "/lib"],
  ...["--ro-bind", "/lib64", "/lib64"],
  ...["--ro-bind", "/etc", "/etc"],
  ...["--tmpfs", "/tmp"],
  ...["--proc", "/proc"],
  ...["--dev", "/dev"],
  "--new-session",
  ...["--setenv", "PATH", "/usr/local/bin:/usr/sbin:/usr/bin:/bin"],
];

/** The bwrap program: SWERUN_BUBBLEWRAP_EXECUTABLE (mini-swe-agent's MSWEA_BUBBLEWRAP_EXECUTABLE), else `bwrap`. */
function defaultExecutable(): string {
  return lookupSetting(["SWERUN_BUBBLEWRAP_EXECUTABLE", "MSWEA_BUBBLEWRAP_EXECUTABLE"])?.value ?? "bwrap";
}

/**
 * The `environment` section for `environment_class: bubblewrap`: mini-swe-agent's keys (`cwd`, `env`,
 * `timeout`, `executable`, `wrapper_args`) plus swerun's `forward_env` and `max_output_bytes`. Each command
 * runs as `bash -c` in a sandbox made by `bwrap <wrapper_args>` with the working directory bound read-write.
 */
export const bubblewrapEnvironmentSchema = z
  .strictObject({
    environment_class: z.literal("bubblewrap"),
    ...environmentBase,
    /** The working directory, bound read-write into the sandbox at the same path ("" = a fresh temp dir). */
    cwd: z._default(z.string(), ""),
    /** Path or name of the bubblewrap program. */
    executable: z._default(z.string().check(z.minLength(1)), defaultExecutable),
    /** bwrap's options before the working directory's `--bind` (replaces the default list whole). */
    wrapper_args: z._default(z.array(z.string()), () => [...DEFAULT_WRAPPER_ARGS]),
    /**
     * swerun's own: host variables set in the sandbox by name (`env` wins). The sandbox already inherits
     * swerun's environment, as mini-swe-agent's does; this matters with `--clearenv` in `wrapper_args`.
     * Values are never recorded.
     */
    forward_env: z._default(z.array(z.string()), []),
  })
  .check(
    z.superRefine((config, context) => {
      for (const [index, name] of config.forward_env.entries()) {
        if (VARIABLE_NAME.test(name)) continue;
        context.addIssue({
          code: "custom",
          path: ["forward_env", index],
          message: `"${name}" is not a variable name (letters, digits and _, not starting with a digit)`,
        });
      }
    }),
  );
