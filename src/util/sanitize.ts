import { isCredentialName } from "./secrets.js";

const SECRET_KEY =
  /(api[_-]?key|authorization|auth[_-]?token|access[_-]?token|ad[_-]?token|secret|password|^token$)/i;
/** Maps of HTTP headers (`extra_headers`, `headers`, `default_headers`): credential-looking names are dropped. */
const HEADER_MAP = /headers$/i;

/**
 * A deep copy of `value` without keys that hold credentials (api_key, Authorization, ...), for records on
 * disk. Inside header maps the broader shared rule applies (`Api-Token`, `Cookie`, ...: `isCredentialName`).
 */
export function withoutSecrets<T>(value: T, headers = false): T {
  if (Array.isArray(value)) return value.map((item) => withoutSecrets(item)) as T;
  if (!isPlainObject(value)) return value;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (SECRET_KEY.test(key) || (headers && isCredentialName(key))) continue;
    result[key] = withoutSecrets(item, HEADER_MAP.test(key));
  }
  return result as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
