/**
 * The short names that `--subset` accepts, mapped to their Hugging Face datasets (mini-swe-agent's
 * `DATASET_MAPPING`, spelled as the hub spells the repositories).
 */
export const SUBSETS: Readonly<Record<string, string>> = {
  full: "princeton-nlp/SWE-bench",
  verified: "princeton-nlp/SWE-bench_Verified",
  lite: "princeton-nlp/SWE-bench_Lite",
  multimodal: "princeton-nlp/SWE-bench_Multimodal",
  multilingual: "swe-bench/SWE-bench_Multilingual",
  smith: "SWE-bench/SWE-smith",
  rebench: "nebius/SWE-rebench",
};

/** The hub dataset for a short name, or undefined when `subset` is not one. */
export function datasetForSubset(subset: string): string | undefined {
  return Object.hasOwn(SUBSETS, subset) ? SUBSETS[subset] : undefined;
}
