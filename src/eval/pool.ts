/**
 * Runs `work` on the items with `workers` in parallel, in order, until the items run out or `stopping()`
 * says no new item may start (items already started finish). `work` must not throw.
 */
export async function runPool<T>(
  items: T[],
  workers: number,
  work: (item: T, worker: number) => Promise<void>,
  stopping: () => boolean = () => false,
): Promise<void> {
  const queue = [...items];
  const worker = async (number: number) => {
    for (;;) {
      if (stopping()) return;
      const item = queue.shift();
      if (item === undefined) return;
      await work(item, number);
    }
  };
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(workers, items.length)) }, (_, i) => worker(i + 1)),
  );
}

/** At most `limit` calls of `run` at once; the others wait their turn (for grading while a batch runs). */
export function limiter(limit: number): <R>(run: () => Promise<R>) => Promise<R> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (run) => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      return await run();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}
