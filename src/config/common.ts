import { z } from "zod";

/** Non-negative number; mini-swe-agent configs write integers as `0.` or `3.`, so floats are floored where ints are meant. */
export const count = z
  .number()
  .min(0)
  .transform((n) => Math.floor(n));
export const stringMap = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean()]).transform(String),
);

/** Keys shared by every environment class. */
export const environmentBase = {
  /** Working directory of every command ("" = the current directory for local, "/" for docker). */
  cwd: z.string().default(""),
  /** Variables added to every command's environment. */
  env: stringMap.default({}),
  /** Seconds a command may run before it is killed. */
  timeout: z.number().positive().default(30),
  /** Program and flags that run a command string, e.g. ["bash", "-c"]. */
  interpreter: z.array(z.string()).min(1).optional(),
  /** Output beyond this many bytes is cut out of the middle (the trajectory records it). */
  max_output_bytes: z.number().int().positive().default(1_048_576),
};
