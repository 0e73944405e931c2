/**
 * A pool's idle workers (lib/customer-code/idle-workers.ts): one that waited WORKER_IDLE_MS for a
 * task is ended, so a quiet process gives its workers' memory back (issue #40); a worker in use is
 * never ended, and work that comes steadily keeps its workers.
 */
import type { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdleWorkers, WORKER_IDLE_MS } from '#lib/customer-code/idle-workers.ts';

/** A worker as the pools hold it, whose termination is recorded. */
function fakeWorker(name: string, ended: string[]): { readonly name: string; readonly thread: Worker } {
  return { name, thread: { terminate: async () => (ended.push(name), 0) } as unknown as Worker };
}

describe('a pool’s idle workers', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('ends a worker once it has waited its idle time for a task, and says so to its pool', async () => {
    // Arrange
    const ended: string[] = [];
    const told: string[] = [];
    const idle = new IdleWorkers<ReturnType<typeof fakeWorker>>({ onEnded: (worker) => told.push(worker.name) });
    idle.put(fakeWorker('a', ended));

    // Act
    await vi.advanceTimersByTimeAsync(WORKER_IDLE_MS - 1);
    const before = [...ended];
    await vi.advanceTimersByTimeAsync(1);

    // Assess
    expect(before).toEqual([]);
    expect(ended).toEqual(['a']);
    expect(told).toEqual(['a']);
    expect(idle.size).toBe(0);
    expect(idle.take()).toBeUndefined();
  });

  it('never ends a worker taken for a task, however long the task runs, and counts its idle time again from when it is put back', async () => {
    // Arrange
    const ended: string[] = [];
    const idle = new IdleWorkers<ReturnType<typeof fakeWorker>>();
    idle.put(fakeWorker('a', ended));
    await vi.advanceTimersByTimeAsync(WORKER_IDLE_MS / 2);

    // Act: taken just before its time, busy for three idle times, then back
    const worker = idle.take()!;
    await vi.advanceTimersByTimeAsync(3 * WORKER_IDLE_MS);
    const whileBusy = [...ended];
    idle.put(worker);
    await vi.advanceTimersByTimeAsync(WORKER_IDLE_MS / 2);
    const soonAfter = [...ended];
    await vi.advanceTimersByTimeAsync(WORKER_IDLE_MS / 2);

    // Assess
    expect(whileBusy).toEqual([]);
    expect(soonAfter).toEqual([]);
    expect(ended).toEqual(['a']);
  });

  it('keeps the workers steady work uses and ends only those left over, the most recently used taken first', async () => {
    // Arrange: two workers, then one task at a time every half idle time
    const ended: string[] = [];
    const idle = new IdleWorkers<ReturnType<typeof fakeWorker>>();
    idle.put(fakeWorker('a', ended));
    idle.put(fakeWorker('b', ended));

    // Act
    for (let task = 0; task < 6; task++) {
      await vi.advanceTimersByTimeAsync(WORKER_IDLE_MS / 2);
      idle.put(idle.take()!);
    }

    // Assess: `b` served every task; `a` waited and was ended
    expect(ended).toEqual(['a']);
    expect(idle.take()?.name).toBe('b');
  });

  it('never ends a waiting worker in Lambda, whose environment keeps its memory size and is frozen between invocations', async () => {
    // Arrange
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'render');
    const ended: string[] = [];
    const idle = new IdleWorkers<ReturnType<typeof fakeWorker>>();
    idle.put(fakeWorker('a', ended));

    // Act
    await vi.advanceTimersByTimeAsync(100 * WORKER_IDLE_MS);
    vi.unstubAllEnvs();

    // Assess
    expect(ended).toEqual([]);
    expect(idle.take()?.name).toBe('a');
  });

  it('ends every waiting worker at once when its pool closes', async () => {
    // Arrange
    const ended: string[] = [];
    const idle = new IdleWorkers<ReturnType<typeof fakeWorker>>();
    idle.put(fakeWorker('a', ended));
    idle.put(fakeWorker('b', ended));

    // Act
    await idle.endAll();
    await vi.advanceTimersByTimeAsync(2 * WORKER_IDLE_MS);

    // Assess: each ended once
    expect(ended.sort()).toEqual(['a', 'b']);
  });
});
