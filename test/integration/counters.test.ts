/**
 * The rate and quota counters against dynalite through the real AWS SDK, with an injected clock:
 * exact under concurrency, and correct across window and month boundaries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitRequest, type CounterStore } from '#lib/accounts/rate-limit.ts';
import {
  QuotaExceededError,
  quotaResetAt,
  quotaUsed,
  refundQuota,
  reserveQuota,
  withReservedQuota,
} from '#lib/accounts/quota.ts';
import { startTestTable } from '../support/dynamo.ts';

let table: Awaited<ReturnType<typeof startTestTable>>;
let store: CounterStore;
let keySeq = 0;
const newKeyId = () => `key_test${++keySeq}`;

beforeAll(async () => {
  table = await startTestTable();
  store = table.store;
});
afterAll(() => table.close());

describe('rate limit', () => {
  it('admits exactly N of 5N requests that arrive at the same instant', async () => {
    // Prepare
    const keyId = newKeyId();
    const now = new Date('2026-11-21T10:00:30Z');

    // Act
    const states = await Promise.all(Array.from({ length: 50 }, () => admitRequest(store, { keyId, limit: 10, now })));

    // Assess
    expect(states.filter((s) => s.admitted)).toHaveLength(10);
    expect(states.filter((s) => !s.admitted)).toHaveLength(40);
    expect(states.filter((s) => s.admitted).map((s) => s.remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('tells a refused caller how long to wait, and admits it after exactly that long', async () => {
    // Prepare
    const keyId = newKeyId();
    const start = new Date('2026-11-21T10:00:17.400Z');
    await admitRequest(store, { keyId, limit: 1, now: start });

    // Act
    const refused = await admitRequest(store, { keyId, limit: 1, now: start });
    const retryAt = new Date(start.getTime() + refused.resetSeconds * 1000);
    const justBefore = await admitRequest(store, { keyId, limit: 1, now: new Date(retryAt.getTime() - 1000) });
    const retried = await admitRequest(store, { keyId, limit: 1, now: retryAt });

    // Assess
    expect(refused.admitted).toBe(false);
    expect(refused.resetSeconds).toBe(43); // 42.6 s left in the window, rounded up
    expect(justBefore.admitted).toBe(false);
    expect(retried.admitted).toBe(true);
  });

  it('never answers a retry time under one second', async () => {
    // Prepare
    const keyId = newKeyId();
    const lastMoment = new Date('2026-11-21T10:00:59.950Z');
    await admitRequest(store, { keyId, limit: 1, now: lastMoment });

    // Act
    const refused = await admitRequest(store, { keyId, limit: 1, now: lastMoment });

    // Assess
    expect(refused.admitted).toBe(false);
    expect(refused.resetSeconds).toBe(1);
  });

  it('keeps separate keys apart', async () => {
    // Prepare
    const now = new Date('2026-11-21T10:00:00Z');
    const [a, b] = [newKeyId(), newKeyId()];
    await admitRequest(store, { keyId: a, limit: 1, now });

    // Act
    const other = await admitRequest(store, { keyId: b, limit: 1, now });

    // Assess
    expect(other.admitted).toBe(true);
  });
});

describe('monthly quota', () => {
  it('never overdraws under concurrent reservations', async () => {
    // Prepare
    const keyId = newKeyId();
    const now = new Date('2026-11-21T10:00:00Z');
    await reserveQuota(store, { keyId, monthlyQuota: 10, count: 3, now });

    // Act
    const results = await Promise.all(
      Array.from({ length: 20 }, () => reserveQuota(store, { keyId, monthlyQuota: 10, count: 1, now })),
    );

    // Assess
    expect(results.filter((r) => r.reserved)).toHaveLength(7);
    expect(await quotaUsed(store, keyId, now)).toBe(10);
  });

  it('refuses a batch that does not fit whole, and says how much remains', async () => {
    // Prepare
    const keyId = newKeyId();
    const now = new Date('2026-11-21T10:00:00Z');
    await reserveQuota(store, { keyId, monthlyQuota: 10, count: 6, now });

    // Act
    const tooMany = await reserveQuota(store, { keyId, monthlyQuota: 10, count: 5, now });
    const moreThanTheQuota = await reserveQuota(store, { keyId: newKeyId(), monthlyQuota: 10, count: 11, now });

    // Assess
    expect(tooMany).toEqual({ reserved: false, remaining: 4, resetAt: new Date('2026-12-01T00:00:00Z') });
    expect(moreThanTheQuota).toMatchObject({ reserved: false, remaining: 10 });
    expect(await quotaUsed(store, keyId, now)).toBe(6);
  });

  it('gives back what failed, and all of it when production throws', async () => {
    // Prepare
    const keyId = newKeyId();
    const now = new Date('2026-11-21T10:00:00Z');
    const input = { keyId, monthlyQuota: 100, now };

    // Act
    await withReservedQuota(store, { ...input, count: 10 }, async () => ({ result: 'partial', failed: 4 }));
    const thrown = await withReservedQuota(store, { ...input, count: 5 }, async () => {
      throw new Error('render crashed');
    }).catch((error: Error) => error);

    // Assess
    expect(thrown).toBeInstanceOf(Error);
    expect(await quotaUsed(store, keyId, now)).toBe(6);
  });

  it('throws QuotaExceededError with the reset time when nothing fits', async () => {
    // Prepare
    const keyId = newKeyId();
    const now = new Date('2026-11-30T23:59:59Z');
    await reserveQuota(store, { keyId, monthlyQuota: 1, count: 1, now });

    // Act
    const error = await withReservedQuota(store, { keyId, monthlyQuota: 1, count: 1, now }, async () => ({
      result: 'never',
      failed: 0,
    })).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(QuotaExceededError);
    expect((error as QuotaExceededError).resetAt.toISOString()).toBe('2026-12-01T00:00:00.000Z');
  });

  it('rolls over at 00:00:00Z on the first of the month, and refunds go to the month charged', async () => {
    // Prepare
    const keyId = newKeyId();
    const november = new Date('2026-11-30T23:59:59.999Z');
    const december = new Date('2026-12-01T00:00:00.000Z');
    const reserved = await reserveQuota(store, { keyId, monthlyQuota: 1, count: 1, now: november });

    // Act
    const inDecember = await reserveQuota(store, { keyId, monthlyQuota: 1, count: 1, now: december });
    if (reserved.reserved) await refundQuota(store, reserved.reservation);

    // Assess
    expect(reserved.reserved).toBe(true);
    expect(inDecember.reserved).toBe(true);
    expect(await quotaUsed(store, keyId, november)).toBe(0);
    expect(await quotaUsed(store, keyId, december)).toBe(1);
    expect(quotaResetAt(new Date('2026-12-31T12:00:00Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });
});
