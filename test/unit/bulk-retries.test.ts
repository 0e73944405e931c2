/**
 * When a bulk message whose worker caught an error comes back (lib/bulk/bulk-records.ts
 * retryDelaySeconds): soon after its first delivery, longer after each next one, never past the
 * queue's visibility timeout, and its five deliveries within the 18 minutes each one used to wait.
 */
import { describe, expect, it } from 'vitest';
import { BULK_MAX_RECEIVE_COUNT, BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS, retryDelaySeconds } from '#lib/bulk/bulk-records.ts';

describe('the delay before a failed bulk message comes back', () => {
  it('grows from seconds to minutes, by delivery', () => {
    // Act: the delays without jitter (the middle of its range)
    const delays = [1, 2, 3, 4].map((count) => retryDelaySeconds(count, () => 0.5));

    // Assess
    expect(delays).toEqual([10, 40, 160, 640]);
  });

  it('is spread a fifth either way, so chunks failed together do not come back together', () => {
    // Act
    const lowest = retryDelaySeconds(2, () => 0);
    const highest = retryDelaySeconds(2, () => 0.999_999);

    // Assess
    expect([lowest, highest]).toEqual([32, 48]);
  });

  it('never waits past the visibility timeout, and its deliveries before the dead-letter queue take less than one visibility timeout used to', () => {
    // Act
    const delays = Array.from({ length: BULK_MAX_RECEIVE_COUNT - 1 }, (_, i) => retryDelaySeconds(i + 1, () => 0.999_999));

    // Assess
    expect(retryDelaySeconds(10, () => 0.999_999)).toBe(BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS);
    expect(delays.reduce((sum, delay) => sum + delay, 0)).toBeLessThan(BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS);
  });
});
