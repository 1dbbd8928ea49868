import * as z from "zod/mini";
import en from "zod/v4/locales/en.js";

let english: z.core.$ZodErrorMap | undefined;

/**
 * zod/mini (a tenth of classic zod's code to load and build, bench/lean.ts) sets no messages itself: the
 * English ones, as classic zod's, handed to each parse (`schema.safeParse(value, { error: englishMessages() })`)
 * and made on first use, so that importing swerun sets nothing in zod's global config.
 */
export function englishMessages(): z.core.$ZodErrorMap {
  english ??= en().localeError;
  return english;
}

/** Non-negative number; mini-swe-agent configs write integers as `0.` or `3.`, so floats are floored where ints are meant. */
export const count = z.pipe(
  z.number().check(z.minimum(0)),
  z.transform((n: number) => Math.floor(n)),
);
export const stringMap = z.record(
  z.string(),
  z.pipe(z.union([z.string(), z.number(), z.boolean()]), z.transform(String)),
);

/** A name a shell can export: letters, digits and _, not starting with a digit. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Keys shared by every environment class. */
export const environmentBase = {
  /** Working directory of every command ("" = the current directory for local, "/" for docker). */
  cwd: z._default(z.string(), ""),
  /** Variables added to every command's environment; names must be shell variable names. */
  env: z._default(
    stringMap.check(
      z.superRefine((env, context) => {
        for (const name of Object.keys(env)) {
          if (VARIABLE_NAME.test(name)) continue;
          context.addIssue({
            code: "custom",
            path: [name],
            message: `"${name}" is not a variable name (letters, digits and _, not starting with a digit)`,
          });
        }
      }),
    ),
    {},
  ),
  /** Seconds a command may run before it is killed. */
  timeout: z._default(z.number().check(z.positive()), 30),
  /** Output beyond this many bytes is cut out of the middle (the trajectory records it). */
  max_output_bytes: z._default(z.int().check(z.positive()), 1_048_576),
};
