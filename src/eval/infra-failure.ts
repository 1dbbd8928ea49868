import { LINE_END, LINE_START } from "./log-parsers/python-text.js";

/**
 * The harness's advisory classification of logs without a usable result (its `infra_failure` module):
 * the first signature found names a reason, and a tier says whether it is surely the environment's fault
 * (`environment`) or could also be the patch's (`ambiguous`). It never changes a verdict.
 */
export type InfraTier = "environment" | "ambiguous";

const SIGNATURES: Array<[reason: string, tier: InfraTier, pattern: RegExp]> = [
  ["browser_launch_failed", "environment", /Failed to launch|Failed to connect to the bus/],
  ["display_unavailable", "environment", /cannot open display|Missing X server|unable to open X display/],
  [
    "out_of_memory",
    "environment",
    new RegExp(`Cannot allocate memory|OutOfMemoryError|${LINE_START}Killed${LINE_END}`),
  ],
  ["container_unavailable", "environment", /Error response from daemon|Cannot connect to the Docker daemon/],
  ["network_unreachable", "environment", /Could not resolve host|Temporary failure in name resolution/],
  ["missing_module", "ambiguous", /Cannot find module|MODULE_NOT_FOUND|ModuleNotFoundError/],
  ["no_tests_collected", "ambiguous", /no tests ran|collected 0 items/],
  ["tests_timed_out", "ambiguous", /Timeout error: \p{Nd}+ seconds exceeded/u],
];

/** The reason and tier of the first signature in `text`, or undefined. */
export function classifyText(text: string): { reason: string; tier: InfraTier } | undefined {
  if (!text) return undefined;
  for (const [reason, tier, pattern] of SIGNATURES) {
    if (pattern.test(text)) return { reason, tier };
  }
  return undefined;
}

/** Classifies the logs that exist, read as the harness reads them, joined by newlines. */
export function classifyLogs(
  texts: Array<string | undefined>,
): { reason: string; tier: InfraTier } | undefined {
  return classifyText(texts.filter((text): text is string => text !== undefined).join("\n"));
}

/** The classification of a log searched elsewhere: `find` tells, for each signature's pattern, whether the log has a match. */
export function classifyWith(
  find: (patterns: RegExp[]) => boolean[],
): { reason: string; tier: InfraTier } | undefined {
  const found = find(SIGNATURES.map(([, , pattern]) => pattern));
  const signature = SIGNATURES[found.indexOf(true)];
  return signature ? { reason: signature[0], tier: signature[1] } : undefined;
}
