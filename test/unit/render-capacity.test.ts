/**
 * Render capacity (lib/render/capacity.ts): slots, the bounded queue, per-key round-robin turns,
 * fair shares when the queue is full, whole-batch admission, and dropping work that waited too long
 * or whose caller left.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RenderCapacity, ServiceBusyError, type RenderSlot } from '#lib/render/capacity.ts';

const limits = (overrides: Partial<{ slots: number; maxQueued: number; maxQueueWaitMs: number }> = {}) => ({
  slots: 2,
  maxQueued: 4,
  maxQueueWaitMs: 60_000,
  ...overrides,
});

/** Records the order in which acquisitions are granted. */
function grantLog() {
  const granted: string[] = [];
  const slots: RenderSlot[] = [];
  const want = (capacity: RenderCapacity, keyId: string, label = keyId) =>
    capacity.acquire(keyId).then((slot) => {
      granted.push(label);
      slots.push(slot);
      return slot;
    });
  return { granted, slots, want };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.useRealTimers();
});

describe('slots', () => {
  it('grants a free slot at once and makes the next document wait until one is released', async () => {
    // Prepare
    const capacity = new RenderCapacity(limits());
    const first = await capacity.acquire('a');
    const second = await capacity.acquire('b');
    let thirdGranted = false;
    const third = capacity.acquire('c').then((slot) => ((thirdGranted = true), slot));
    await settle();
    expect(thirdGranted).toBe(false);
    expect(capacity.state).toMatchObject({ running: 2, waiting: 1 });

    // Act
    first.release();
    await third;

    // Assess
    expect(thirdGranted).toBe(true);
    expect(capacity.state).toMatchObject({ running: 2, waiting: 0 });
    second.release();
    (await third).release();
    expect(capacity.state).toMatchObject({ running: 0, waiting: 0, promised: 0 });
  });

  it('frees a slot once however often it is released, and through `using`', async () => {
    // Prepare
    const capacity = new RenderCapacity(limits({ slots: 1 }));

    // Act
    {
      using slot = await capacity.acquire('a');
      slot.release();
      slot.release();
    }

    // Assess
    expect(capacity.state.running).toBe(0);
  });
});

describe('the bounded queue', () => {
  it('refuses at once, with a whole number of seconds to wait, what the queue cannot take', async () => {
    // Prepare: both slots taken and the queue full, all by one key
    const capacity = new RenderCapacity(limits());
    await capacity.acquire('a');
    await capacity.acquire('a');
    for (let i = 0; i < 4; i++) void capacity.acquire('a');

    // Act
    const refused = await capacity.acquire('a').catch((error: unknown) => error);

    // Assess
    expect(refused).toBeInstanceOf(ServiceBusyError);
    const { retryAfterSeconds } = refused as ServiceBusyError;
    expect(Number.isInteger(retryAfterSeconds)).toBe(true);
    expect(retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(capacity.state.waiting).toBe(4);
  });

  it('drops a document that waited longer than allowed, and serves the others', async () => {
    // Prepare
    vi.useFakeTimers();
    const capacity = new RenderCapacity(limits({ slots: 1, maxQueueWaitMs: 1_000 }));
    const running = await capacity.acquire('a');
    const waiting = capacity.acquire('b');
    const outcome = waiting.then(
      () => 'granted',
      (error: unknown) => error,
    );

    // Act
    await vi.advanceTimersByTimeAsync(1_001);

    // Assess
    const dropped = await outcome;
    expect(dropped).toBeInstanceOf(ServiceBusyError);
    expect((dropped as ServiceBusyError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(capacity.state).toMatchObject({ running: 1, waiting: 0 });
    running.release();
    expect(capacity.state.running).toBe(0);
  });

  it('drops a waiting document whose caller gave up, and gives its place to the next', async () => {
    // Prepare
    const capacity = new RenderCapacity(limits({ slots: 1 }));
    const running = await capacity.acquire('a');
    const callerGone = new AbortController();
    const abandoned = capacity.acquire('b', { signal: callerGone.signal }).catch((error: unknown) => error);
    const next = capacity.acquire('c');

    // Act
    callerGone.abort(new Error('gone'));
    running.release();

    // Assess
    expect(await abandoned).toEqual(new Error('gone'));
    (await next).release();
    expect(capacity.state).toMatchObject({ running: 0, waiting: 0 });
  });
});

describe('fairness', () => {
  it('serves waiting keys in turn, one document each, whatever order they arrived in', async () => {
    // Prepare: key a queues five documents before key b queues two
    const capacity = new RenderCapacity(limits({ slots: 1, maxQueued: 10 }));
    const log = grantLog();
    const blocker = await capacity.acquire('x');
    for (let i = 1; i <= 5; i++) void log.want(capacity, 'a', `a${i}`);
    for (let i = 1; i <= 2; i++) void log.want(capacity, 'b', `b${i}`);

    // Act: release slots one at a time
    blocker.release();
    for (let i = 0; i < 7; i++) {
      await settle();
      log.slots[i]?.release();
    }
    await settle();

    // Assess
    expect(log.granted).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'a4', 'a5']);
  });

  it('admits a key below its fair share of a queue another key filled, and refuses the key that filled it', async () => {
    // Prepare: key a has both slots and the whole queue
    const capacity = new RenderCapacity(limits({ maxQueued: 4 }));
    await capacity.acquire('a');
    await capacity.acquire('a');
    for (let i = 0; i < 4; i++) void capacity.acquire('a').catch(() => undefined);

    // Act
    const b = [capacity.acquire('b'), capacity.acquire('b')];
    const third = await capacity.acquire('b').catch((error: unknown) => error);
    const moreOfA = await capacity.acquire('a').catch((error: unknown) => error);

    // Assess: b holds its share (4 / 2 keys), a is refused
    for (const waiting of b) void waiting.catch(() => undefined);
    expect(capacity.state.waiting).toBe(6);
    expect(third).toBeInstanceOf(ServiceBusyError);
    expect(moreOfA).toBeInstanceOf(ServiceBusyError);
  });
});

describe('batches', () => {
  it('admits a whole batch into an idle process even when it is larger than the queue', () => {
    // Prepare
    const capacity = new RenderCapacity(limits({ maxQueued: 4 }));

    // Act
    const admission = capacity.admitBatch('a', 100);

    // Assess
    expect(capacity.state.promised).toBe(100);
    admission.release();
    expect(capacity.state.promised).toBe(0);
  });

  it("admits another key's batch while the queue is full, and its items get their turns without being refused", async () => {
    // Prepare: key a fills slots and queue
    const capacity = new RenderCapacity(limits({ slots: 1, maxQueued: 3 }));
    const log = grantLog();
    const blocker = await capacity.acquire('a');
    for (let i = 1; i <= 3; i++) void log.want(capacity, 'a', `a${i}`);
    await expect(capacity.acquire('a')).rejects.toBeInstanceOf(ServiceBusyError);

    // Act: key b's batch of three is admitted, then its items arrive
    using admission = capacity.admitBatch('b', 3);
    const items = [1, 2, 3].map((i) =>
      capacity.acquire('b', { batchItem: true }).then((slot) => {
        log.granted.push(`b${i}`);
        log.slots.push(slot);
      }),
    );
    blocker.release();
    for (let i = 0; i < 6; i++) {
      await settle();
      log.slots[i]?.release();
    }
    await Promise.all(items);

    // Assess: a's and b's documents alternate
    expect(log.granted.slice(0, 6)).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'b3']);
    expect(capacity.state.promised).toBe(0);
    admission.release();
  });

  it("refuses a batch of a key that already holds more than its share, and gives back a batch's untaken places", async () => {
    // Prepare
    const capacity = new RenderCapacity(limits({ maxQueued: 4 }));
    const first = capacity.admitBatch('a', 3);
    void capacity.acquire('a', { batchItem: true });

    // Act
    const second = (() => {
      try {
        return capacity.admitBatch('a', 3);
      } catch (error) {
        return error;
      }
    })();
    first.release();

    // Assess
    expect(second).toBeInstanceOf(ServiceBusyError);
    expect(capacity.state.promised).toBe(0);
  });
});

describe('single documents', () => {
  it('are admitted (or refused) at once, and their admitted place is never refused when the render asks for its slot', async () => {
    // Prepare: one slot taken, and the queue (of 2) full of another key's work
    const capacity = new RenderCapacity(limits({ slots: 1, maxQueued: 2 }));
    const running = await capacity.acquire('a');
    const admitted = capacity.admit('b', 1);
    const second = capacity.acquire('a');
    expect(() => capacity.admit('a', 1)).toThrow(ServiceBusyError);

    // Act: b's render asks for its slot although the queue is full
    const slot = admitted.acquire();
    running.release();
    (await second).release();

    // Assess: b got its turn
    (await slot).release();
    admitted.release();
    expect(capacity.state).toMatchObject({ running: 0, waiting: 0, promised: 0 });
  });

  it("never give a single document's place to a batch item of the same key", async () => {
    // Prepare
    const capacity = new RenderCapacity(limits({ slots: 1, maxQueued: 1 }));
    const running = await capacity.acquire('x');
    void capacity.acquire('x').catch(() => undefined);
    using single = capacity.admit('a', 1);

    // Act
    const item = await capacity.acquire('a', { batchItem: true }).catch((error: unknown) => error);

    // Assess: the item had no batch place to take, and a holds its share already
    expect(item).toBeInstanceOf(ServiceBusyError);
    expect(capacity.state.promised).toBe(1);
    running.release();
    single.release();
  });
});

describe('retry estimates', () => {
  it('grow with the work queued and stay whole seconds of at least 1', async () => {
    // Prepare
    const capacity = new RenderCapacity(limits({ slots: 1, maxQueued: 1_000 }));
    const empty = capacity.retryAfterSeconds();
    await capacity.acquire('a');
    for (let i = 0; i < 40; i++) void capacity.acquire(`k${i}`).catch(() => undefined);

    // Act
    const busy = capacity.retryAfterSeconds();

    // Assess
    expect(empty).toBe(1);
    expect(busy).toBeGreaterThan(empty);
    expect(Number.isInteger(busy)).toBe(true);
  });
});

describe("a key's share of the renderer", () => {
  it('keeps a key at its share: its next document waits in its own line while other keys take the free slots', async () => {
    // Prepare: 4 slots; a free key (share 1) holds one with a document that never finishes
    const capacity = new RenderCapacity(limits({ slots: 4, maxQueued: 20 }));
    const held = await capacity.acquire('free', { maxRunning: 1 });
    const waitingFree = capacity.acquire('free', { maxRunning: 1, maxWaitMs: Number.POSITIVE_INFINITY });
    let freeGranted = false;
    void waitingFree.then(() => (freeGranted = true));

    // Act: another key's documents arrive after the free key's waiting one
    const others = await Promise.all([capacity.acquire('other'), capacity.acquire('other'), capacity.acquire('other')]);
    await settle();

    // Assess: the others got the three free slots at once; the free key waits for its own document
    expect(others).toHaveLength(3);
    expect(freeGranted).toBe(false);
    expect(capacity.runningFor('free')).toBe(1);
    others[0]!.release();
    await settle();
    expect(freeGranted).toBe(false);
    held.release();
    (await waitingFree).release();
    expect(freeGranted).toBe(true);
    for (const slot of others.slice(1)) slot.release();
    expect(capacity.state).toMatchObject({ running: 0, waiting: 0 });
  });

  it('never lets a key with a share take every slot, whatever its share', async () => {
    // Prepare
    const capacity = new RenderCapacity(limits({ slots: 3, maxQueued: 20, maxQueueWaitMs: 60_000 }));
    const pro = [await capacity.acquire('pro', { maxRunning: 8 }), await capacity.acquire('pro', { maxRunning: 8 })];
    let thirdGranted = false;
    void capacity.acquire('pro', { maxRunning: 8 }).then((slot) => ((thirdGranted = true), slot.release()));

    // Act
    const other = await capacity.acquire('other');
    await settle();

    // Assess: the last slot went to the other key at once
    expect(thirdGranted).toBe(false);
    expect(capacity.runningFor('pro')).toBe(2);
    other.release();
    pro[0]!.release();
    await settle();
    expect(thirdGranted).toBe(true);
    pro[1]!.release();
  });

  it("lets a job's document wait past the request wait limit, until its own", async () => {
    // Prepare
    vi.useFakeTimers();
    const capacity = new RenderCapacity(limits({ slots: 1, maxQueued: 10, maxQueueWaitMs: 5_000 }));
    const held = await capacity.acquire('a');
    const request = capacity.acquire('b').catch((error: unknown) => error);
    const job = capacity.acquire('c', { maxWaitMs: 60_000 });
    let jobGranted = false;
    void job.then(() => (jobGranted = true));

    // Act
    await vi.advanceTimersByTimeAsync(30_000);

    // Assess: the request was dropped at 5 s; the job still waits, and gets the slot
    expect(await request).toBeInstanceOf(ServiceBusyError);
    expect(jobGranted).toBe(false);
    held.release();
    await vi.advanceTimersByTimeAsync(0);
    expect(jobGranted).toBe(true);
    (await job).release();
  });
});
