/**
 * A key's share of the renderers across processes (lib/accounts/render-leases.ts), through the real
 * AWS SDK against dynalite: never more than the ceiling at once however many takers race, a lease
 * given back frees its place, one whose holder died lapses, and other keys are untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRefusal, leaseRenders, type RenderLease } from '#lib/accounts/render-leases.ts';
import { startTestTable } from '../support/dynamo.ts';

describe('render leases', () => {
  let table: Awaited<ReturnType<typeof startTestTable>>;
  beforeAll(async () => {
    table = await startTestTable();
  });
  afterAll(async () => {
    await table?.close();
  });

  it('grants at most the ceiling to takers racing for one key, and as many as are free to a partial taker', async () => {
    // Act: 30 takers of 5 renders each at once, for a ceiling of 50
    const taken = await Promise.all(
      Array.from({ length: 30 }, () => leaseRenders(table.store, { keyId: 'key_race', want: 5, atLeast: 5, ceiling: 50, lifetimeMs: 60_000 })),
    );

    // Assess
    const granted = taken.filter((t): t is RenderLease => !isRefusal(t));
    expect(granted.reduce((sum, lease) => sum + lease.count, 0)).toBeLessThanOrEqual(50);
    expect(granted.length).toBeGreaterThan(0);
    const refused = taken.filter(isRefusal);
    expect(refused.every((r) => r.retryAfterSeconds >= 1)).toBe(true);
    // Another key has its whole share.
    const other = await leaseRenders(table.store, { keyId: 'key_other', want: 50, ceiling: 50, lifetimeMs: 60_000 });
    expect(isRefusal(other) ? 0 : other.count).toBe(50);
    for (const lease of granted) await lease.release();
  });

  it('answers every one of 40 takers racing for one place each at once: 40 granted under a ceiling of 50, none refused', async () => {
    // Act
    const taken = await Promise.all(Array.from({ length: 40 }, () => leaseRenders(table.store, { keyId: 'key_many', want: 1, ceiling: 50, lifetimeMs: 60_000 })));

    // Assess
    expect(taken.filter(isRefusal)).toEqual([]);
    for (const lease of taken as RenderLease[]) await lease.release();
    const whole = await leaseRenders(table.store, { keyId: 'key_many', want: 50, ceiling: 50, lifetimeMs: 60_000 });
    expect(isRefusal(whole) ? 0 : whole.count).toBe(50);
  });

  it('gives back a released lease at once, and a dead holder\'s when it lapses', async () => {
    // Prepare: the whole share taken by a holder that dies (never releases) and one that releases
    let clock = 1_000_000;
    const now = () => clock;
    const dead = await leaseRenders(table.store, { keyId: 'key_lapse', want: 6, ceiling: 10, lifetimeMs: 30_000, now });
    const alive = await leaseRenders(table.store, { keyId: 'key_lapse', want: 4, ceiling: 10, lifetimeMs: 30_000, now });
    expect([dead, alive].map((t) => (isRefusal(t) ? 0 : t.count))).toEqual([6, 4]);
    expect(await leaseRenders(table.store, { keyId: 'key_lapse', want: 1, ceiling: 10, lifetimeMs: 30_000, now })).toMatchObject({ refused: true, active: 10 });

    // Act and assess: released, 4 are free; past the dead one's time, all 10
    await (alive as RenderLease).release();
    const partial = await leaseRenders(table.store, { keyId: 'key_lapse', want: 8, ceiling: 10, lifetimeMs: 30_000, now });
    expect(isRefusal(partial) ? 0 : partial.count).toBe(4);
    await (partial as RenderLease).release();
    clock += 31_000;
    const all = await leaseRenders(table.store, { keyId: 'key_lapse', want: 10, ceiling: 10, lifetimeMs: 30_000, now });
    expect(isRefusal(all) ? 0 : all.count).toBe(10);
  });
});
