/** An image a batch pulled and still has on a daemon. */
interface Held {
  bytes: number;
  /** When an instance last needed it (or it was pulled): least recently used images go first. */
  used: number;
}

/**
 * The disk the images a batch pulled take on one daemon, against its budget (bytes; undefined: no limit).
 * Pulls under way count with their estimated size until they end. Images that were there before the batch
 * are not counted (they are never removed).
 */
export class ImageBudget {
  readonly limit: number | undefined;
  readonly #held = new Map<string, Held>();
  readonly #pulling = new Map<string, number>();
  #clock = 0;
  #peak = 0;

  constructor(limit: number | undefined) {
    this.limit = limit;
  }

  /** Bytes held plus bytes being pulled. */
  get used(): number {
    let sum = 0;
    for (const held of this.#held.values()) sum += held.bytes;
    for (const bytes of this.#pulling.values()) sum += bytes;
    return sum;
  }

  /** The most the held images (pulls ended) have taken at once. */
  get peak(): number {
    return this.#peak;
  }

  holds(image: string): boolean {
    return this.#held.has(image);
  }

  /** Whether `bytes` more fit in the budget now. */
  fits(bytes: number): boolean {
    return this.limit === undefined || this.used + bytes <= this.limit;
  }

  /** A pull of `image` begins, expected to take `bytes`. */
  reserve(image: string, bytes: number): void {
    this.#pulling.set(image, bytes);
  }

  /** The pull ended: the image takes `bytes` now (undefined: the pull failed, nothing is held). */
  settle(image: string, bytes: number | undefined): void {
    this.#pulling.delete(image);
    if (bytes !== undefined) this.#held.set(image, { bytes, used: ++this.#clock });
    let held = 0;
    for (const entry of this.#held.values()) held += entry.bytes;
    this.#peak = Math.max(this.#peak, held);
  }

  /** An image the batch pulled earlier (a resumed batch), found on the daemon. */
  adopt(image: string, bytes: number): void {
    this.settle(image, bytes);
  }

  /** An instance needs the image now. */
  touch(image: string): void {
    const held = this.#held.get(image);
    if (held) held.used = ++this.#clock;
  }

  /** The image is gone from the daemon. */
  forget(image: string): void {
    this.#held.delete(image);
  }

  /**
   * The held images to remove, least recently used first, so that `bytes` more fit (0: so that what is held
   * fits): only those `removable` allows. Undefined when even removing all of those would not make room.
   */
  victims(bytes: number, removable: (image: string) => boolean): string[] | undefined {
    if (this.limit === undefined) return [];
    let over = this.used + bytes - this.limit;
    if (over <= 0) return [];
    const victims: string[] = [];
    const byAge = [...this.#held].sort(([, a], [, b]) => a.used - b.used);
    for (const [image, held] of byAge) {
      if (!removable(image)) continue;
      victims.push(image);
      over -= held.bytes;
      if (over <= 0) return victims;
    }
    return undefined;
  }

  /** Every held image `removable` allows, least recently used first. */
  removable(removable: (image: string) => boolean): string[] {
    return [...this.#held]
      .sort(([, a], [, b]) => a.used - b.used)
      .map(([image]) => image)
      .filter(removable);
  }
}
