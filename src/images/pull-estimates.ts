import { registryImageSize } from "../environments/docker/registry-size.js";

/**
 * How much disk a pull will take, before it happens: the registry's (compressed) size of the image times the
 * most any pull so far grew on disk, else the largest image pulled.
 */
export class PullEstimates {
  readonly #sizes = new Map<string, Promise<number | undefined>>();
  readonly #onLearned: () => void;
  /** Bytes on disk per byte the registry reports, the most seen (estimates a pull before it happens). */
  #expansion = 1;
  #largestPulled = 0;
  /** Whether a pull has ended: before, an estimate is only the registry's compressed size (or nothing). */
  #learned = false;

  /** `onLearned`: called whenever a pull's size on disk has been learned. */
  constructor(onLearned: () => void) {
    this.#onLearned = onLearned;
  }

  /** Whether a pull has ended, so estimates hold. */
  get learned(): boolean {
    return this.#learned;
  }

  /** The bytes the registry reports for the image (asked once). */
  registrySize(image: string): Promise<number | undefined> {
    let size = this.#sizes.get(image);
    if (!size) {
      size = registryImageSize(image);
      this.#sizes.set(image, size);
    }
    return size;
  }

  /** The size a pull of `image` should be expected to take. */
  async estimate(image: string): Promise<number> {
    const size = await this.registrySize(image);
    return size === undefined ? this.#largestPulled : Math.ceil(size * this.#expansion);
  }

  /** Learns how much larger than the registry's figure images are on disk. */
  learn(image: string, bytes: number): void {
    this.#largestPulled = Math.max(this.#largestPulled, bytes);
    void this.registrySize(image).then((size) => {
      if (size) this.#expansion = Math.max(this.#expansion, bytes / size);
      this.#learned = true;
      this.#onLearned();
    });
  }
}
