import { describe, expect, it } from "vitest";
import { limiter, runPool, runWorkers } from "../../src/util/worker-pool.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("runWorkers", () => {
  it("runs every item once, with at most `workers` at a time, each on a numbered worker", async () => {
    const items = [1, 2, 3, 4, 5, 6, 7];
    let active = 0;
    let most = 0;
    const seen: Array<[number, number]> = [];
    await runWorkers({
      workers: 3,
      next: () => items.shift(),
      work: async (item, worker) => {
        active += 1;
        most = Math.max(most, active);
        await tick();
        seen.push([item, worker]);
        active -= 1;
      },
    });
    expect(seen.map(([item]) => item).sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(most).toBe(3);
    expect(new Set(seen.map(([, worker]) => worker))).toEqual(new Set([1, 2, 3]));
  });

  it("starts nothing new once stopping, lets started items finish, and puts back an item taken as it stopped", async () => {
    let stopping = false;
    const done: number[] = [];
    const putBack: number[] = [];
    let n = 0;
    await runWorkers({
      workers: 2,
      next: async () => {
        n += 1;
        const item = n;
        if (item === 3) stopping = true; // stopping begins while the third item is being taken
        return item;
      },
      work: async (item) => {
        await tick();
        done.push(item);
      },
      stopping: () => stopping,
      putBack: (item) => putBack.push(item),
    });
    expect(done.sort()).toEqual([1, 2]);
    expect(putBack).toEqual([3]);
  });
});

describe("runPool", () => {
  it("takes the items in order and uses no more workers than items", async () => {
    const workers = new Set<number>();
    const order: string[] = [];
    await runPool(["a", "b"], 5, async (item, worker) => {
      order.push(item);
      workers.add(worker);
    });
    expect(order).toEqual(["a", "b"]);
    expect([...workers].every((worker) => worker <= 2)).toBe(true);
  });

  it("returns at once for no items", async () => {
    await runPool([], 3, async () => {
      throw new Error("no item to work on");
    });
  });
});

describe("limiter", () => {
  it("runs at most `limit` calls at once, the others in turn, and passes results and errors through", async () => {
    const limit = limiter(2);
    let active = 0;
    let most = 0;
    const call = (value: number) =>
      limit(async () => {
        active += 1;
        most = Math.max(most, active);
        await tick();
        active -= 1;
        if (value === 3) throw new Error("three");
        return value * 10;
      });
    const results = await Promise.allSettled([call(1), call(2), call(3), call(4)]);
    expect(most).toBe(2);
    expect(results.map((result) => (result.status === "fulfilled" ? result.value : "error"))).toEqual([
      10,
      20,
      "error",
      40,
    ]);
  });
});
