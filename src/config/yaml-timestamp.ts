/**
 * A YAML 1.1 timestamp as a config value: the text Python's `str()` gives the `datetime.date` or
 * `datetime.datetime` PyYAML reads from it (what litellm puts in a URL or a header, e.g. Azure's
 * `api_version: 2024-06-01`), or the text itself where PyYAML reads no timestamp (`2024-6-1`: a date needs
 * two-digit months and days). The `yaml` package would give a JavaScript Date, which no config value is.
 */
export function pythonTimestampText(source: string): string {
  if (/^\d{4}-\d\d-\d\d$/.test(source)) return source;
  const match =
    /^(\d{4})-(\d\d?)-(\d\d?)(?:[Tt]|[ \t]+)(\d\d?):(\d\d):(\d\d)(?:\.(\d*))?(?:[ \t]*(Z|[-+]\d\d?(?::\d\d)?))?$/.exec(
      source,
    );
  if (!match) return source;
  const [, year, month, day, hour, minute, second, fraction = "", zone] = match;
  const two = (digits = "") => digits.padStart(2, "0");
  const micros = fraction.slice(0, 6).padEnd(6, "0");
  let text = `${year}-${two(month)}-${two(day)} ${two(hour)}:${minute}:${second}`;
  if (Number(micros) !== 0) text += `.${micros}`;
  if (zone === "Z") text += "+00:00";
  else if (zone) {
    const [hours = "", minutes = "00"] = zone.slice(1).split(":");
    text += `${zone[0]}${two(hours)}:${minutes}`;
  }
  return text;
}
