import { globalConfigPath, maskSecret, readEnvFile, writeGlobalSetting } from "../config/keys.js";
import { UserError } from "../errors.js";

const KEY_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const USAGE = "usage: swerun config set KEY VALUE | swerun config unset KEY | swerun config show";

function checkKey(key: string | undefined): string {
  if (!key) throw new UserError(`swerun config: missing KEY (${USAGE})`);
  if (!KEY_NAME.test(key))
    throw new UserError(`swerun config: "${key}" is not a variable name (letters, digits, _)`);
  return key;
}

/**
 * `swerun config set KEY VALUE`, `unset KEY`, `show`: the global config file (API keys and other
 * settings, mode 0600) in the user's config directory, or `SWERUN_GLOBAL_CONFIG_DIR`. `show` masks values.
 */
export async function runConfigCommand(action: string, key?: string, value?: string): Promise<number> {
  const path = globalConfigPath();
  switch (action) {
    case "set": {
      const name = checkKey(key);
      if (value === undefined || value === "")
        throw new UserError(`swerun config set ${name}: missing VALUE (${USAGE})`);
      try {
        writeGlobalSetting(name, value);
      } catch (error) {
        throw new UserError(`swerun config set ${name}: ${(error as Error).message}`);
      }
      process.stdout.write(`Set ${name} in ${path}\n`);
      return 0;
    }
    case "unset": {
      const name = checkKey(key);
      if (!(name in readEnvFile(path))) {
        process.stdout.write(`${name} was not set in ${path}\n`);
        return 0;
      }
      writeGlobalSetting(name, undefined);
      process.stdout.write(`Removed ${name} from ${path}\n`);
      return 0;
    }
    case "show": {
      const values = readEnvFile(path);
      const names = Object.keys(values).sort();
      process.stdout.write(`${path}\n`);
      if (names.length === 0) process.stdout.write("  (nothing set)\n");
      for (const name of names) process.stdout.write(`  ${name}=${maskSecret(values[name] ?? "")}\n`);
      return 0;
    }
    default:
      throw new UserError(`swerun config: unknown action "${action}" (${USAGE})`);
  }
}
