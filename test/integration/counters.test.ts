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
  RESERVATION_LIFETIME_MS,
  reserveQuota,
  settleReservation,
  withHeldAndReservedQuota,
  withReservedQuota,
} from '#lib/accounts/quota.ts';
import { isRefusal, leaseRenders } from '#lib/accounts/render-leases.ts';
import { reconcileQuotas, repairDeadRequestsOf } from '#lib/accounts/reconcile.ts';
import { describePdf, putPdfRecord, type PdfStore } from '#lib/storage/pdfs.ts';
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

  it('takes a render share with the reservation and gives back whichever was granted when the other is refused', async () => {
    // Prepare: a share of one render, asked for as generate asks (a refusal is its 503).
    const keyId = newKeyId();
    const now = new Date('2026-11-21T10:00:00Z');
    const share = () => leaseRenders(store, { keyId, want: 1, ceiling: 1, lifetimeMs: 60_000 }).then((taken) => (isRefusal(taken) ? Promise.reject(new Error('share taken')) : taken));
    const shareIsFree = async () => {
      const taken = await leaseRenders(store, { keyId, want: 1, ceiling: 1, lifetimeMs: 60_000 });
      if (isRefusal(taken)) return false;
      await taken.release();
      return true;
    };

    // Act: one that works (one of two PDFs failed); one refused by the share held meanwhile; one refused by the quota.
    const made = await withHeldAndReservedQuota(store, { keyId, monthlyQuota: 3, count: 2, now }, share, async (_reservation, held) => ({ result: held.count, failed: 1 }));
    const holder = await share();
    const busy = await withHeldAndReservedQuota(store, { keyId, monthlyQuota: 3, count: 1, now }, share, async () => ({ result: 'never', failed: 0 })).catch((error: Error) => error);
    await holder.release();
    const overQuota = await withHeldAndReservedQuota(store, { keyId, monthlyQuota: 3, count: 5, now }, share, async () => ({ result: 'never', failed: 0 })).catch((error: unknown) => error);

    // Assess: charged only what was made; the refusals charged nothing and left the share free.
    expect(made).toBe(1);
    expect((busy as Error).message).toBe('share taken');
    expect(overQuota).toBeInstanceOf(QuotaExceededError);
    expect(await quotaUsed(store, keyId, now)).toBe(1);
    expect(await shareIsFree()).toBe(true);
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
    if (reserved.reserved) await settleReservation(store, reserved.reservation, 1);

    // Assess
    expect(reserved.reserved).toBe(true);
    expect(inDecember.reserved).toBe(true);
    expect(await quotaUsed(store, keyId, november)).toBe(0);
    expect(await quotaUsed(store, keyId, december)).toBe(1);
    expect(quotaResetAt(new Date('2026-12-31T12:00:00Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });
});

describe('requests that died holding quota', () => {
  /** The PDF records a request wrote under its reservation before it died (no object is needed to count). */
  async function writeRecords(keyId: string, reservationId: string, count: number, createdAt: Date): Promise<void> {
    const pdfs = { dynamo: store.client, tableName: store.tableName } as unknown as PdfStore;
    for (let i = 0; i < count; i++) {
      const record = describePdf({
        id: `pdf_${reservationId}${i}`,
        keyId,
        size: 100,
        pages: 1,
        format: 'A4',
        generationTimeMs: 1,
        createdAt: createdAt.toISOString(),
        retentionDays: 7,
        reservationId,
      });
      await putPdfRecord(pdfs, record);
    }
  }
  const stores = () => ({ counters: store, pdfs: { dynamo: store.client, tableName: store.tableName } as unknown as PdfStore });

  it('a reservation is kept until it expires, then settled by the records written under it', async () => {
    // Prepare: a batch of 5 reserved, 2 records written, then the process died
    const keyId = newKeyId();
    const now = new Date('2026-11-21T10:00:00Z');
    const reserved = await reserveQuota(store, { keyId, monthlyQuota: 10, count: 5, now });
    if (!reserved.reserved) throw new Error('not reserved');
    await writeRecords(keyId, reserved.reservation.id, 2, now);

    // Act
    const early = await repairDeadRequestsOf(stores(), keyId, new Date(now.getTime() + RESERVATION_LIFETIME_MS - 1));
    const usedWhileLive = await quotaUsed(store, keyId, now);
    const later = new Date(now.getTime() + RESERVATION_LIFETIME_MS + 1);
    const repaired = await repairDeadRequestsOf(stores(), keyId, later);
    const again = await repairDeadRequestsOf(stores(), keyId, later);

    // Assess: held while it may be alive, then exactly the 2 stored, once
    expect(early).toBe(0);
    expect(usedWhileLive).toBe(5);
    expect(repaired).toBe(1);
    expect(again).toBe(0);
    expect(await quotaUsed(store, keyId, now)).toBe(2);
  });

  it('a request that settles after its reservation was repaired changes nothing', async () => {
    // Prepare
    const keyId = newKeyId();
    const now = new Date('2026-11-21T10:00:00Z');
    const reserved = await reserveQuota(store, { keyId, monthlyQuota: 10, count: 3, now });
    if (!reserved.reserved) throw new Error('not reserved');
    await writeRecords(keyId, reserved.reservation.id, 3, now);
    await repairDeadRequestsOf(stores(), keyId, new Date(now.getTime() + RESERVATION_LIFETIME_MS + 1));

    // Act: the "dead" request was only slow, and now gives back 1 it thinks failed
    await settleReservation(store, reserved.reservation, 1);

    // Assess: the records decided
    expect(await quotaUsed(store, keyId, now)).toBe(3);
  });

  it('quota held by a dead request is settled before a request would be refused for it', async () => {
    // Prepare: the whole quota held by a request that died having stored nothing
    const keyId = newKeyId();
    const then = new Date('2026-11-21T10:00:00Z');
    await reserveQuota(store, { keyId, monthlyQuota: 2, count: 2, now: then });
    const now = new Date(then.getTime() + RESERVATION_LIFETIME_MS + 1);

    // Act
    const made = await withReservedQuota(
      store,
      { keyId, monthlyQuota: 2, count: 1, now },
      async () => ({ result: 'made', failed: 0 }),
      (key, at) => repairDeadRequestsOf(stores(), key, at),
    );

    // Assess
    expect(made).toBe('made');
    expect(await quotaUsed(store, keyId, now)).toBe(1);
  });

  it('the scheduled reconciliation settles every key and says what it repaired', async () => {
    // Prepare: two keys with dead requests, one live request
    const [first, second, live] = [newKeyId(), newKeyId(), newKeyId()];
    const then = new Date('2026-11-21T11:00:00Z');
    const a = await reserveQuota(store, { keyId: first, monthlyQuota: 10, count: 4, now: then });
    await reserveQuota(store, { keyId: second, monthlyQuota: 10, count: 2, now: then });
    const now = new Date(then.getTime() + RESERVATION_LIFETIME_MS + 1);
    await reserveQuota(store, { keyId: live, monthlyQuota: 10, count: 3, now });
    if (!a.reserved) throw new Error('not reserved');
    await writeRecords(first, a.reservation.id, 1, then);

    // Act
    const report = await reconcileQuotas(stores(), now);

    // Assess: (the table also holds reservations other tests left to expire)
    expect(report.repaired).toBeGreaterThanOrEqual(2);
    expect(report.returned).toBeGreaterThanOrEqual(5);
    expect(await quotaUsed(store, first, then)).toBe(1);
    expect(await quotaUsed(store, second, then)).toBe(0);
    expect(await quotaUsed(store, live, now)).toBe(3);
  });
});
