/**
 * The one worker pool: `workers` workers each take the next item from `next` and `work` on it, until `next`
 * gives nothing or `stopping()` says no new item may start (items already started finish). An item taken
 * just as stopping began is handed to `putBack` (the batch's scheduler requeues it). `work` must not throw.
 */
export async function runWorkers<T>(options: {
  workers: number;
  next: () => Promise<T | undefined> | T | undefined;
  work: (item: T, worker: number) => Promise<void>;
  stopping?: () => boolean;
  putBack?: (item: T) => void;
}): Promise<void> {
  const stopping = options.stopping ?? (() => false);
  const worker = async (number: number) => {
    for (;;) {
      if (stopping()) return;
      const item = await options.next();
      if (item === undefined) return;
      if (stopping()) return options.putBack?.(item);
      await options.work(item, number);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.workers) }, (_, i) => worker(i + 1)));
}

/** The pool over a list: `items` in order, with at most `workers` (and no more workers than items). */
export async function runPool<T>(
  items: T[],
  workers: number,
  work: (item: T, worker: number) => Promise<void>,
  stopping: () => boolean = () => false,
): Promise<void> {
  const queue = [...items];
  await runWorkers({
    workers: Math.min(workers, items.length),
    next: () => queue.shift(),
    work,
    stopping,
  });
}

/**
 * The pool fed one call at a time (grading while a batch runs): at most `limit` calls of `run` at once, the
 * others wait their turn in order.
 */
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
