import * as z from "zod/mini";
import { parseSize } from "../util/bytes.js";
import { environmentBase, VARIABLE_NAME } from "./common.js";
import { dockerHostSchema } from "./docker-hosts.js";
import { RunArgsError, translateRunArgs } from "./docker-run-args.js";

/** `sleep` durations: seconds, or a number with s, m, h or d ("2h", "90m", 7200). */
const SLEEP_DURATION = /^\d+(\.\d+)?[smhd]?$/;

/** `container_timeout`: a duration `sleep` understands, kept as its text (default "2h"). */
export const containerTimeout = z
  .pipe(
    z._default(z.union([z.string(), z.number().check(z.positive())]), "2h"),
    z.transform((value: string | number) => String(value)),
  )
  .check(
    z.refine((value) => SLEEP_DURATION.test(value), {
      message: 'must be a duration `sleep` understands, e.g. "2h", "90m" or 7200',
    }),
  );

/** Seconds of a `sleep` duration ("2h" → 7200), rounded up. */
export function durationSeconds(duration: string): number {
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[duration.slice(-1)] ?? 1;
  return Math.ceil(Number.parseFloat(duration) * unit);
}

/** The `environment` section for `environment_class: docker` (mini-swe-agent's keys plus swerun's own). */
export const dockerEnvironmentSchema = z
  .strictObject({
    environment_class: z.literal("docker"),
    ...environmentBase,
    /**
     * The image to run, e.g. docker.io/swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest.
     * `swerun swebench` sets it per instance; `swerun run` needs it in the config.
     */
    image: z._default(z.string().check(z.minLength(1)), ""),
    /** Working directory of every command inside the container ("" means "/"). */
    cwd: z._default(z.string(), "/"),
    /** Program and flags that run a command string inside the container. */
    interpreter: z._default(z.array(z.string()).check(z.minLength(1)), ["bash", "-lc"]),
    /** Host variables copied into every command when set on the host; `env` wins. Values are never recorded. */
    forward_env: z._default(z.array(z.string()), []),
    /** How long the container lives (its `sleep`), e.g. "2h" or seconds; a leaked container ends by itself. */
    container_timeout: containerTimeout,
    /** Seconds allowed for pulling a missing image. */
    pull_timeout: z._default(z.number().check(z.positive()), 120),
    /** `docker run` flags, translated to Engine API options (common ones only; others are refused). */
    run_args: z._default(z.array(z.string()), ["--rm"]),
    /** Allow `--privileged` in run_args. */
    allow_privileged: z._default(z.boolean(), false),
    /** Options merged into the Engine API container-create request (HostConfig and Labels key by key). */
    container_options: z._default(z.record(z.string(), z.unknown()), {}),
    /**
     * How actions reach the container: "session" (default) writes each one to a shell that is the
     * container's PID 1, a few ms per action; "exec" makes a `sleep` container and one `docker exec` per
     * action, as mini-swe-agent does (tens of ms each). Both run the interpreter in a new process session
     * with the same variables, cwd and output handling.
     */
    exec_mode: z._default(z.enum(["session", "exec"]), "session"),
    /** Keep the container after the run, for debugging; swerun prints how to enter it. */
    keep_container: z._default(z.boolean(), false),
    /**
     * Several daemons for `swerun swebench` (each with its worker count; `--docker-host` replaces them):
     * "URL[:workers]" strings or `{host, workers, tls, tls_verify, cert_path}`. Empty: DOCKER_HOST's daemon.
     * Other commands use the first one. Unset (not recorded) unless given.
     */
    docker_hosts: z.optional(z.array(dockerHostSchema)),
    /**
     * `swerun swebench`: the disk the images a batch pulls may take on each daemon ("120G", "1.5T", "500Gi",
     * bytes); least recently used images no instance still needs are removed to stay within it. Unset
     * (not recorded): every pulled image is kept. `--image-budget` replaces it.
     */
    image_budget: z.optional(z.union([z.string(), z.number()])).check(
      z.refine((value) => value === undefined || parseSize(value) !== undefined, {
        message: 'must be a size such as "120G", "1.5T", "500Gi" or a number of bytes',
      }),
    ),
  })
  .check(
    z.superRefine((config, context) => {
      // Each action's variables are exported by a shell (exec_mode session), so they need shell names
      // (`env` names are checked for every environment class, in environmentBase).
      for (const [field, names] of [["forward_env", config.forward_env]] as const) {
        for (const [index, name] of names.entries()) {
          if (VARIABLE_NAME.test(name)) continue;
          context.addIssue({
            code: "custom",
            path: [field, index],
            message: `"${name}" is not a variable name (letters, digits and _, not starting with a digit)`,
          });
        }
      }
      try {
        translateRunArgs(config.run_args, { allowPrivileged: config.allow_privileged });
      } catch (error) {
        if (!(error instanceof RunArgsError)) throw error;
        context.addIssue({
          code: "custom",
          path: ["run_args"],
          message: error.message.replace(/^run_args: /, ""),
        });
      }
    }),
  );
