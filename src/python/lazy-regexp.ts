/**
 * A regular expression built at its first use. Building one with Unicode property classes (`\p{L}`) takes
 * 0.2 to 1.5 ms each; most runs never use the filters that need them, and a module's constants are built
 * when it loads, in every run's start (bench/lean.ts).
 */
export function lazyRegExp(build: () => RegExp): () => RegExp {
  let built: RegExp | undefined;
  return () => {
    built ??= build();
    return built;
  };
}
