/**
 * How a bulk worker holds the work of its message, a chunk or a job's completion
 * (lib/bulk/message-hold.ts, lib/bulk/bulk-records.ts): the lease and the message's visibility
 * renewed together while it works, so that a worker that crashes or times out leaves its work to
 * come back within two minutes, not the queue's 18, and the message never comes back while the
 * work's lease still holds it.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS, BULK_WORKER_TIMEOUT_SECONDS, HOLD_HEARTBEAT_MS, HOLD_LEASE_MS, HOLD_MESSAGE_SECONDS } from '#lib/bulk/bulk-records.ts';
import { holdingMessage, renewWhileWorking, type HeldMessage, type WorkLease } from '#lib/bulk/message-hold.ts';

describe('a bulk worker’s renewals of its work’s hold', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('renews the lease, then the message, at every beat while it works, and nothing after it stops', async () => {
    // Arrange
    const calls: string[] = [];
    const hold = renewWhileWorking({
      renewLease: async () => (calls.push('lease'), 'held'),
      hideMessage: async () => void calls.push('message'),
      everyMs: HOLD_HEARTBEAT_MS,
    });

    // Act: three beats of work, then the work is done
    await vi.advanceTimersByTimeAsync(3 * HOLD_HEARTBEAT_MS);
    await hold.stop();
    await vi.advanceTimersByTimeAsync(5 * HOLD_HEARTBEAT_MS);

    // Assess
    expect(calls).toEqual(['lease', 'message', 'lease', 'message', 'lease', 'message']);
  });

  it('does not hide the message after it stopped: a renewal under way ends before stop() resolves', async () => {
    // Arrange: a renewal of the lease that takes a while (a slow table)
    const calls: string[] = [];
    let renewed: () => void = () => undefined;
    const hold = renewWhileWorking({
      renewLease: () => new Promise((resolve) => (renewed = () => resolve('held'))).then(() => (calls.push('lease'), 'held' as const)),
      hideMessage: async () => void calls.push('message'),
      everyMs: HOLD_HEARTBEAT_MS,
    });
    await vi.advanceTimersByTimeAsync(HOLD_HEARTBEAT_MS);

    // Act: the worker stops (its work failed) while the renewal is under way, then sets the retry delay
    const stopped = hold.stop().then(() => calls.push('retry delay set'));
    renewed();
    await stopped;

    // Assess: the beat's hiding came before the worker's own setting, never after it
    expect(calls).toEqual(['lease', 'message', 'retry delay set']);
  });

  it('stops once the lease is lost (the work done, or taken over by its next delivery), and the message is no longer hidden by it', async () => {
    // Arrange
    const calls: string[] = [];
    renewWhileWorking({ renewLease: async () => (calls.push('lease'), 'lost'), hideMessage: async () => void calls.push('message'), everyMs: HOLD_HEARTBEAT_MS });

    // Act
    await vi.advanceTimersByTimeAsync(4 * HOLD_HEARTBEAT_MS);

    // Assess
    expect(calls).toEqual(['lease']);
  });

  it('goes on after a renewal that failed (a throttled table), at the next beat', async () => {
    // Arrange
    let tries = 0;
    const hidden: number[] = [];
    const hold = renewWhileWorking({
      renewLease: async () => {
        if (++tries === 1) throw new Error('ProvisionedThroughputExceededException');
        return 'held';
      },
      hideMessage: async () => void hidden.push(tries),
      everyMs: HOLD_HEARTBEAT_MS,
    });

    // Act
    await vi.advanceTimersByTimeAsync(3 * HOLD_HEARTBEAT_MS);
    await hold.stop();

    // Assess: the first beat hid nothing (its lease was not renewed), the next two did
    expect(hidden).toEqual([2, 3]);
  });
});

/** A message and a lease that record what the worker does to them, in order. */
function recorded(take: 'taken' | 'busy' | 'done' = 'taken') {
  const calls: string[] = [];
  const message: HeldMessage = { hide: async (seconds) => void calls.push(`hide ${seconds} s`) };
  const lease: WorkLease<'busy' | 'done'> = {
    take: async () => (calls.push(`take ${take}`), take),
    renew: async () => (calls.push('renew'), 'held'),
    release: async () => void calls.push('release'),
  };
  return { calls, message, lease };
}

describe('a bulk worker holding its message’s work (a chunk’s, a completion’s)', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('hides the message before it takes the lease, renews both while the work runs (a completion of minutes), and nothing once it is done', async () => {
    // Arrange: a completion that writes its manifest and archive for two and a half beats
    const { calls, message, lease } = recorded();
    const work = async () => {
      calls.push('work starts');
      await new Promise((resolve) => setTimeout(resolve, 2.5 * HOLD_HEARTBEAT_MS));
      calls.push('work ends');
      return 'completed';
    };

    // Act
    const running = holdingMessage(message, lease, work);
    await vi.advanceTimersByTimeAsync(3 * HOLD_HEARTBEAT_MS);
    const outcome = await running;
    await vi.advanceTimersByTimeAsync(4 * HOLD_HEARTBEAT_MS);

    // Assess
    expect(outcome).toEqual({ ran: 'completed' });
    expect(calls).toEqual([`hide ${HOLD_MESSAGE_SECONDS} s`, 'take taken', 'work starts', 'renew', `hide ${HOLD_MESSAGE_SECONDS} s`, 'renew', `hide ${HOLD_MESSAGE_SECONDS} s`, 'work ends']);
  });

  it('runs nothing and renews nothing when another worker has the work: the message, hidden two minutes, comes back', async () => {
    // Arrange
    const { calls, message, lease } = recorded('busy');
    let ran = false;

    // Act
    const outcome = await holdingMessage(message, lease, async () => void (ran = true));
    await vi.advanceTimersByTimeAsync(3 * HOLD_HEARTBEAT_MS);

    // Assess
    expect(outcome).toEqual({ refused: 'busy' });
    expect(ran).toBe(false);
    expect(calls).toEqual([`hide ${HOLD_MESSAGE_SECONDS} s`, 'take busy']);
  });

  it('when the work fails: stops renewing, gives the lease up, and only then lets the error go on (the caller sets the retry delay after)', async () => {
    // Arrange
    const { calls, message, lease } = recorded();

    // Act
    const failed = holdingMessage(message, lease, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1.5 * HOLD_HEARTBEAT_MS));
      throw new Error('SlowDown');
    }).catch((error: Error) => calls.push(`error ${error.message}`));
    await vi.advanceTimersByTimeAsync(3 * HOLD_HEARTBEAT_MS);
    await failed;

    // Assess: one beat while it ran, none after
    expect(calls).toEqual([`hide ${HOLD_MESSAGE_SECONDS} s`, 'take taken', 'renew', `hide ${HOLD_MESSAGE_SECONDS} s`, 'release', 'error SlowDown']);
  });

  it('holds the lease alone where no message is the worker’s to hide (the reconcile function’s dead letters), and goes on when SQS refuses the first hiding', async () => {
    // Arrange
    const { calls, lease } = recorded();
    const refusing: HeldMessage = { hide: async () => Promise.reject(new Error('ReceiptHandleIsInvalid')) };

    // Act
    const alone = holdingMessage(undefined, lease, () => new Promise((resolve) => setTimeout(resolve, 1.5 * HOLD_HEARTBEAT_MS)).then(() => calls.push('done')));
    await vi.advanceTimersByTimeAsync(2 * HOLD_HEARTBEAT_MS);
    await alone;
    await holdingMessage(refusing, lease, async () => calls.push('done despite SQS'));

    // Assess
    expect(calls).toEqual(['take taken', 'renew', 'done', 'take taken', 'done despite SQS']);
  });

  it('leaves a dead worker’s work free before its message comes back, within minutes of the last beat, even with one beat missed, whether a chunk or a completion', () => {
    // Assess: a worker dies just after a beat; its lease lapses first, then its message is delivered again
    expect(HOLD_MESSAGE_SECONDS * 1000).toBeGreaterThan(HOLD_LEASE_MS);
    // A missed beat (the renewal failed once) still leaves the lease held until the next one
    expect(HOLD_LEASE_MS).toBeGreaterThan(2 * HOLD_HEARTBEAT_MS);
    expect(HOLD_MESSAGE_SECONDS).toBeLessThanOrEqual(120);
    expect(HOLD_MESSAGE_SECONDS).toBeLessThan(BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS / 8);
    // A completion's worker may run the function's whole 15 minutes: it is held by its renewals, not by a lease that long
    expect(HOLD_LEASE_MS).toBeLessThan((BULK_WORKER_TIMEOUT_SECONDS * 1000) / 8);
  });
});
