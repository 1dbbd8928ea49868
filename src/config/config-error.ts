import { UserError } from "../errors.js";

/** A bad config: one line naming the file (or flag) and the key path. Exit code 2. */
export class ConfigError extends UserError {}
