import envPaths from "env-paths";

/** swerun's cache folder: `SWERUN_CACHE_DIR`, else the user's cache directory (`~/.cache/swerun` on Linux). */
export function cacheRoot(): string {
  return process.env.SWERUN_CACHE_DIR || envPaths("swerun", { suffix: "" }).cache;
}
