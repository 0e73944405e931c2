/**
 * How often `pdfapi bulk` reads its job (packages/cli/src/bulk.ts nextPoll, issue #40): paced by the
 * server, not by a backoff that only grows: a read that saw the job's counts move is followed a
 * second later, only reads that saw nothing new wait longer (up to 10 s), and a Retry-After the
 * server sends is the wait, whatever the counts did.
 */
import { describe, expect, it } from 'vitest';
import { nextPoll, POLL_MAX_MS, POLL_MIN_MS, type PollState } from '../../packages/cli/src/bulk.ts';

/** The waits after a run of reads, each seeing the given counts (or refused: undefined). */
function waitsAfter(reads: readonly { seen: string | undefined; retryAfterSeconds?: number }[]): number[] {
  let state: PollState = { seen: undefined, waitMs: POLL_MIN_MS };
  return reads.map((read) => (state = nextPoll(state, read)).waitMs);
}

describe('pdfapi bulk’s reads of its job', () => {
  it('reads every second while the counts move, however long it has been waiting before', () => {
    // Arrange: twelve reads of a queued job, then a running job whose counts change at every read
    const idle = Array.from({ length: 12 }, () => ({ seen: 'queued 0 0' }));
    const moving = [1, 2, 3, 4].map((n) => ({ seen: `running ${n * 10} 0` }));

    // Act
    const waits = waitsAfter([...idle, ...moving]);

    // Assess: the idle job's reads spaced out to the most; the first read that saw a change back to 1 s
    expect(waits.slice(0, 12).at(-1)).toBe(POLL_MAX_MS);
    expect(waits.slice(0, 12)).toEqual([...waits.slice(0, 12)].sort((a, b) => a - b));
    expect(waits.slice(12)).toEqual([POLL_MIN_MS, POLL_MIN_MS, POLL_MIN_MS, POLL_MIN_MS]);
  });

  it('waits longer only while nothing changes, up to 10 s', () => {
    // Act
    const waits = waitsAfter([{ seen: 'running 5 0' }, { seen: 'running 5 0' }, { seen: 'running 5 0' }, { seen: 'running 5 1' }, { seen: 'running 5 1' }]);

    // Assess
    expect(waits).toEqual([POLL_MIN_MS, 1_500, 2_250, POLL_MIN_MS, 1_500]);
    expect(Math.max(...waitsAfter(Array.from({ length: 30 }, () => ({ seen: 'queued 0 0' }))))).toBe(POLL_MAX_MS);
  });

  it('waits what the server’s Retry-After says, on a refused read or on the job’s own answer', () => {
    // Act
    const waits = waitsAfter([
      { seen: 'running 10 0' },
      { seen: undefined, retryAfterSeconds: 7 }, // 503 service_busy or 429
      { seen: 'running 20 0', retryAfterSeconds: 3 }, // moved, but the server asks for 3 s
      { seen: 'running 30 0' },
    ]);

    // Assess
    expect(waits).toEqual([POLL_MIN_MS, 7_000, 3_000, POLL_MIN_MS]);
  });
});
