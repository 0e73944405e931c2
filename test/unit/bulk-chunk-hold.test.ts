/**
 * How a bulk worker holds its chunk (lib/bulk/chunk-hold.ts, lib/bulk/bulk-records.ts): the lease
 * and the message's visibility renewed together while it works, so that a worker that crashes or
 * times out leaves its chunk to come back within two minutes, not the queue's 18, and the message
 * never comes back while the chunk's lease still holds it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS, CHUNK_HEARTBEAT_MS, CHUNK_HOLD_SECONDS, CHUNK_LEASE_MS } from '#lib/bulk/bulk-records.ts';
import { holdChunk } from '#lib/bulk/chunk-hold.ts';

describe('a bulk worker’s hold on its chunk', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('renews the lease, then the message, at every beat while it works, and nothing after it stops', async () => {
    // Arrange
    const calls: string[] = [];
    const hold = holdChunk({
      renewLease: async () => (calls.push('lease'), 'held'),
      hideMessage: async () => void calls.push('message'),
      everyMs: CHUNK_HEARTBEAT_MS,
    });

    // Act: three beats of work, then the chunk is done
    await vi.advanceTimersByTimeAsync(3 * CHUNK_HEARTBEAT_MS);
    await hold.stop();
    await vi.advanceTimersByTimeAsync(5 * CHUNK_HEARTBEAT_MS);

    // Assess
    expect(calls).toEqual(['lease', 'message', 'lease', 'message', 'lease', 'message']);
  });

  it('does not hide the message after it stopped: a renewal under way ends before stop() resolves', async () => {
    // Arrange: a renewal of the lease that takes a while (a slow table)
    const calls: string[] = [];
    let renewed: () => void = () => undefined;
    const hold = holdChunk({
      renewLease: () => new Promise((resolve) => (renewed = () => resolve('held'))).then(() => (calls.push('lease'), 'held' as const)),
      hideMessage: async () => void calls.push('message'),
      everyMs: CHUNK_HEARTBEAT_MS,
    });
    await vi.advanceTimersByTimeAsync(CHUNK_HEARTBEAT_MS);

    // Act: the worker stops (its chunk failed) while the renewal is under way, then sets the retry delay
    const stopped = hold.stop().then(() => calls.push('retry delay set'));
    renewed();
    await stopped;

    // Assess: the beat's hiding came before the worker's own setting, never after it
    expect(calls).toEqual(['lease', 'message', 'retry delay set']);
  });

  it('stops once the lease is lost (the chunk done, or taken over by its next delivery), and the message is no longer hidden by it', async () => {
    // Arrange
    const calls: string[] = [];
    holdChunk({ renewLease: async () => (calls.push('lease'), 'lost'), hideMessage: async () => void calls.push('message'), everyMs: CHUNK_HEARTBEAT_MS });

    // Act
    await vi.advanceTimersByTimeAsync(4 * CHUNK_HEARTBEAT_MS);

    // Assess
    expect(calls).toEqual(['lease']);
  });

  it('goes on after a renewal that failed (a throttled table), at the next beat', async () => {
    // Arrange
    let tries = 0;
    const hidden: number[] = [];
    const hold = holdChunk({
      renewLease: async () => {
        if (++tries === 1) throw new Error('ProvisionedThroughputExceededException');
        return 'held';
      },
      hideMessage: async () => void hidden.push(tries),
      everyMs: CHUNK_HEARTBEAT_MS,
    });

    // Act
    await vi.advanceTimersByTimeAsync(3 * CHUNK_HEARTBEAT_MS);
    await hold.stop();

    // Assess: the first beat hid nothing (its lease was not renewed), the next two did
    expect(hidden).toEqual([2, 3]);
  });

  it('leaves a dead worker’s chunk free before its message comes back, within minutes of the last beat, even with one beat missed', () => {
    // Assess: a worker dies just after a beat; its lease lapses first, then its message is delivered again
    expect(CHUNK_HOLD_SECONDS * 1000).toBeGreaterThan(CHUNK_LEASE_MS);
    // A missed beat (the renewal failed once) still leaves the lease held until the next one
    expect(CHUNK_LEASE_MS).toBeGreaterThan(2 * CHUNK_HEARTBEAT_MS);
    expect(CHUNK_HOLD_SECONDS).toBeLessThanOrEqual(120);
    expect(CHUNK_HOLD_SECONDS).toBeLessThan(BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS / 8);
  });
});
