import { UserError } from "../errors.js";
import { hasControlCharacters } from "../util/printable.js";
import { redact } from "../util/secrets.js";

/**
 * Refuses a label that is not one printable line, or that holds a registered secret (an API key, a
 * credential): a label names the run's folder, its eval log folder and more, and a secret must never get into
 * a path (the console would print `[REDACTED]` paths that do not exist). Exit 2, naming the flag, never the label.
 */
export function checkLabel(label: string, flag: string): void {
  if (hasControlCharacters(label))
    throw new UserError(`${flag} ${JSON.stringify(label)}: a label is one line without control characters`);
  if (redact(label) !== label)
    throw new UserError(
      `${flag}: the label holds a secret (an API key or credential swerun redacts); it would go into folder names: choose another label`,
    );
}
