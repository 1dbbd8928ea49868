import type { Instance } from "./dataset.js";

/** Placeholder until the offline image builder lands: a bundled instance's image must already exist. */
export async function ensureFixtureImage(
  _image: string,
  _instance: Instance,
  _datasetDir: string,
): Promise<void> {}
