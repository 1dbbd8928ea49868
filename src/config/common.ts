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

/** A name a shell can export: letters, digits and _, not starting with a digit. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Keys shared by every environment class. */
export const environmentBase = {
  /** Working directory of every command ("" = the current directory for local, "/" for docker). */
  cwd: z.string().default(""),
  /** Variables added to every command's environment; names must be shell variable names. */
  env: stringMap
    .superRefine((env, context) => {
      for (const name of Object.keys(env)) {
        if (VARIABLE_NAME.test(name)) continue;
        context.addIssue({
          code: "custom",
          path: [name],
          message: `"${name}" is not a variable name (letters, digits and _, not starting with a digit)`,
        });
      }
    })
    .default({}),
  /** Seconds a command may run before it is killed. */
  timeout: z.number().positive().default(30),
  /** Output beyond this many bytes is cut out of the middle (the trajectory records it). */
  max_output_bytes: z.number().int().positive().default(1_048_576),
};
