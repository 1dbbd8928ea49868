/** A repeatable flag's value as cac hands it over (absent, once, or several times) as a list of strings. */
export function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value.map(String) : [String(value)];
}
