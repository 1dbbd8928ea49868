const SECRET_KEY = /(api[_-]?key|authorization|auth[_-]?token|access[_-]?token|secret|password|^token$)/i;

/** A deep copy of `value` without keys that hold credentials (api_key, Authorization, ...), for records on disk. */
export function withoutSecrets<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => withoutSecrets(item)) as T;
  if (!isPlainObject(value)) return value;
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (SECRET_KEY.test(key)) continue;
    result[key] = withoutSecrets(item);
  }
  return result as T;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
