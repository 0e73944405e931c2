/**
 * Which due webhook deliveries a sender starts next (lib/webhooks/picking.ts): fair between API
 * keys, so one key's slow receivers never hold every sender slot nor keep another key's due
 * deliveries waiting behind theirs.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { settings } from '#lib/settings.ts';
import { pickDueDeliveries } from '#lib/webhooks/picking.ts';

/** `count` due deliveries of `keyId`, named `<keyId><n>`. */
const of = (keyId: string, count: number) => Array.from({ length: count }, (_, n) => ({ id: `${keyId}${n + 1}`, keyId }));
const ids = (picked: readonly { id: string }[]) => picked.map((delivery) => delivery.id);
const idle = new Map<string, number>();

describe('picking due webhook deliveries', () => {
  test('one key with 40 due deliveries ahead of another key’s one: the other key’s is picked in the first turn, and the first key gets only its own share', () => {
    // Prepare: key A's deliveries all came due before key B's.
    const due = [...of('a', 40), ...of('b', 1)];

    // Act
    const picked = pickDueDeliveries(due, { freeSlots: 16, perKeyLimit: 2, inFlightByKey: idle });

    // Assess
    expect(ids(picked)).toEqual(['a1', 'b1', 'a2']);
  });

  test('a key already at its limit gets nothing, whatever is free; the others share the slots round-robin, in due order', () => {
    const due = [...of('a', 10), ...of('b', 3), ...of('c', 3)];
    const picked = pickDueDeliveries(due, { freeSlots: 5, perKeyLimit: 3, inFlightByKey: new Map([['a', 3]]) });
    expect(ids(picked)).toEqual(['b1', 'c1', 'b2', 'c2', 'b3']);
  });

  test('keys with fewer tries under way go first: a key with none under way takes the one free slot before a busier key that waited longer', () => {
    const due = [...of('a', 5), ...of('b', 1)];
    const picked = pickDueDeliveries(due, { freeSlots: 1, perKeyLimit: 2, inFlightByKey: new Map([['a', 1]]) });
    expect(ids(picked)).toEqual(['b1']);
  });

  test('equally busy keys take turns in the order they have waited; no more than the free slots are picked', () => {
    const due = [{ id: 'c1', keyId: 'c' }, { id: 'a1', keyId: 'a' }, { id: 'c2', keyId: 'c' }, { id: 'b1', keyId: 'b' }, { id: 'a2', keyId: 'a' }];
    expect(ids(pickDueDeliveries(due, { freeSlots: 4, perKeyLimit: 2, inFlightByKey: idle }))).toEqual(['c1', 'a1', 'b1', 'c2']);
    expect(pickDueDeliveries(due, { freeSlots: 0, perKeyLimit: 2, inFlightByKey: idle })).toEqual([]);
    expect(pickDueDeliveries([], { freeSlots: 8, perKeyLimit: 2, inFlightByKey: idle })).toEqual([]);
  });

  test('with more keys than slots allow two each, every key gets a first try before any gets a second, and none more than its limit', () => {
    const due = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].flatMap((key) => of(key, 5));
    const picked = pickDueDeliveries(due, { freeSlots: 16, perKeyLimit: 2, inFlightByKey: idle });
    expect(ids(picked)).toEqual(['a1', 'b1', 'c1', 'd1', 'e1', 'f1', 'g1', 'h1', 'i1', 'a2', 'b2', 'c2', 'd2', 'e2', 'f2', 'g2']);
  });
});

describe('the sender’s limits', () => {
  const names = ['WEBHOOK_CONCURRENCY', 'WEBHOOK_CONCURRENCY_PER_KEY'] as const;
  const saved = names.map((name) => process.env[name]);
  afterEach(() => names.forEach((name, i) => (saved[i] === undefined ? delete process.env[name] : (process.env[name] = saved[i]))));

  test('default to 16 tries under way, 2 of them for one key; both are settings, and a bad value fails loudly', () => {
    for (const name of names) delete process.env[name];
    expect(settings.webhookConcurrency).toBe(16);
    expect(settings.webhookConcurrencyPerKey).toBe(2);
    process.env.WEBHOOK_CONCURRENCY = '32';
    process.env.WEBHOOK_CONCURRENCY_PER_KEY = '4';
    expect(settings.webhookConcurrency).toBe(32);
    expect(settings.webhookConcurrencyPerKey).toBe(4);
    process.env.WEBHOOK_CONCURRENCY_PER_KEY = '0';
    expect(() => settings.webhookConcurrencyPerKey).toThrow('WEBHOOK_CONCURRENCY_PER_KEY must be an integer >= 1');
  });
});
