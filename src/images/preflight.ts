import type { Instance } from "../datasets/dataset.js";
import { dataRoot } from "../environments/docker/images.js";
import { UserError } from "../errors.js";
import { formatBytes } from "../util/bytes.js";
import type { ImagePool } from "./pool.js";

/** The budget and where it was given, for messages. */
export interface BudgetSetting {
  bytes?: number;
  /** `--image-budget` or `environment.image_budget`. */
  source: string;
  /** As the user wrote it ("120G"). */
  text?: string;
}

/** Registry questions at once. */
const CONCURRENCY = 8;

/**
 * Before the first model call: reads each daemon's free space in its data root and the registry's size of
 * each image the batch will pull, and refuses (one line, UserError) a budget larger than the free space or
 * a largest image that does not fit the budget or the free space. Returns a line for the log.
 */
export async function imagePreflight(
  pool: ImagePool,
  instances: readonly Instance[],
  budget: BudgetSetting,
): Promise<string> {
  const toPull = new Set<string>();
  for (const instance of instances) {
    const image = pool.imageOf(instance);
    if (image && pool.daemons.some((daemon) => !daemon.before.has(image))) toPull.add(image);
  }
  const images = [...toPull];
  const sizes = new Map<string, number>();
  for (let start = 0; start < images.length; start += CONCURRENCY) {
    const batch = images.slice(start, start + CONCURRENCY);
    const found = await Promise.all(batch.map((image) => pool.registrySize(image)));
    for (const [index, size] of found.entries()) {
      const image = batch[index];
      if (image && size !== undefined) sizes.set(image, size);
    }
    // A registry that answers none of the first questions (offline, no access) is not asked about the rest.
    if (sizes.size === 0) break;
  }
  let largest: [string, number] | undefined;
  for (const entry of sizes) if (!largest || entry[1] > largest[1]) largest = entry;
  const budgetText = `${budget.source} ${budget.text ?? formatBytes(budget.bytes ?? 0)}`;
  if (budget.bytes !== undefined && largest && largest[1] > budget.bytes)
    throw new UserError(
      `${budgetText} is smaller than the batch's largest image, ${largest[0]} (${formatBytes(largest[1])} in its registry)`,
    );
  const roots: string[] = [];
  for (const daemon of pool.daemons) {
    const root = await dataRoot(daemon.docker, daemon.endpoint);
    const where = `Docker's data root on ${daemon.endpoint.host} (${root.path}`;
    if (root.free === undefined) {
      roots.push(`${daemon.endpoint.host}: free space unknown`);
      continue;
    }
    roots.push(`${daemon.endpoint.host}: ${formatBytes(root.free)} free`);
    if (budget.bytes !== undefined && budget.bytes > root.free + daemon.held)
      throw new UserError(
        `${budgetText} is more than the free space of ${where}: ${formatBytes(root.free)} free); lower the budget or free some disk`,
      );
    if (largest && largest[1] > root.free)
      throw new UserError(
        `${where}: ${formatBytes(root.free)} free) has no room for the batch's largest image, ${largest[0]} (${formatBytes(largest[1])} in its registry); free some disk (swerun cleanup --images removes what earlier runs pulled)`,
      );
  }
  const total = [...sizes.values()].reduce((sum, size) => sum + size, 0);
  return `images: ${images.length} to pull (${sizes.size} sized by their registry: ${formatBytes(total)}${largest ? `, largest ${largest[0]} ${formatBytes(largest[1])}` : ""}); ${roots.join("; ")}`;
}
