import { tmpdir } from "node:os";

const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Temporary directories: /tmp/<name>, macOS's /var/folders/../T/<name>, and this machine's tmpdir. */
function tempDirPattern(): RegExp {
  const roots = ["(?:/private)?/tmp", "(?:/private)?/var/folders/[^/\\s]+/[^/\\s]+/T"];
  const local = tmpdir().replace(/\/+$/, "");
  if (local && local !== "/tmp" && !local.startsWith("/var/folders/")) roots.push(escapeRegExp(local));
  return new RegExp(`(?:${roots.join("|")})/[^/\\s'"\`:;,)]+`, "g");
}

/**
 * Volatile parts of command output, in the order they are replaced. Each is something that differs
 * between two runs of the same command on the same files: when, how long, where the temp dir is, which container.
 */
function rules(): Array<[RegExp, string]> {
  return [
    [tempDirPattern(), "<TMP>"],
    [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2}\b)?/g, "<TIMESTAMP>"],
    [
      new RegExp(
        `\\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),? +(?:\\d{1,2} +${MONTH}|${MONTH} +\\d{1,2}),? +(?:\\d{4} +)?\\d{1,2}:\\d{2}(?::\\d{2})?(?: +[AP]M)?(?: +[A-Z]{2,5}| +[+-]\\d{4})?(?: +\\d{4})?`,
        "g",
      ),
      "<DATE>",
    ],
    [new RegExp(`\\b${MONTH} +\\d{1,2} +(?:\\d{1,2}:\\d{2}|\\d{4})\\b`, "g"), "<DATE>"],
    [/\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/g, "<TIME>"],
    [/\b\d+m\d+(?:\.\d+)?s\b/g, "<DURATION>"],
    [/\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|secs?|seconds?|mins?|minutes?)\b/g, "<DURATION>"],
    [/\bswerun-[\w.-]*?[0-9a-f]{8}\b/g, "<CONTAINER>"],
    [/\b[0-9a-f]{64}\b/g, "<ID>"],
    [/\b[0-9a-f]{40}\b/g, "<ID>"],
    [/\b[0-9a-f]{12}\b/g, "<ID>"],
  ];
}

let cached: Array<[RegExp, string]> | undefined;

/**
 * Replaces the volatile parts of a command's output with placeholders: ISO timestamps, dates and clock
 * times, durations (`0.03s`, `in 1.2 seconds`, `0m0.003s`), temp-dir paths, swerun container names and
 * 12/40/64-hex ids (container ids, hostnames in containers, commit ids of repositories made at setup).
 * `cwd`, when given (and not `/`), becomes `<CWD>` first. PIDs are left alone: no pattern tells them
 * from other numbers safely.
 */
export function normaliseOutput(text: string, cwd = ""): string {
  cached ??= rules();
  let result = text;
  const dir = cwd.replace(/\/+$/, "");
  if (dir && dir !== "/" && dir.length > 1) result = result.split(dir).join("<CWD>");
  for (const [pattern, placeholder] of cached) result = result.replace(pattern, placeholder);
  return result;
}
