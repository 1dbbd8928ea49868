import { UserError } from "../errors.js";
import { hasControlCharacters } from "../util/printable.js";

/** Refuses a label that is not one printable line (exit 2, naming the flag). */
export function checkLabel(label: string, flag: string): void {
  if (hasControlCharacters(label))
    throw new UserError(`${flag} ${JSON.stringify(label)}: a label is one line without control characters`);
}
