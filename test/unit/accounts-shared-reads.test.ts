/**
 * A key's flood in one process (the local stack serves every request on one event loop): requests
 * presenting the same key while it is being read share that read (lib/accounts/keys.ts), and the
 * rate-limit increments of one key's window that arrive while its counter is being written share
 * the next write (lib/accounts/rate-limit.ts), admission staying exact. The table is a fake that
 * keeps one item per key and applies the conditions the real writes carry.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createApiKey, findActiveKey } from '#lib/accounts/keys.ts';
import { admitRequest } from '#lib/accounts/rate-limit.ts';

/** A table of items by pk/sk answering each call after a turn of the event loop, counting the calls by kind. */
function fakeTable() {
  const items = new Map<string, Record<string, any>>();
  const calls = { get: 0, put: 0, update: 0 };
  const id = (key: { pk: string; sk: string }) => `${key.pk}\n${key.sk}`;
  const send = async (command: unknown): Promise<any> => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    if (command instanceof GetCommand) {
      calls.get++;
      const item = items.get(id(command.input.Key as { pk: string; sk: string }));
      return { Item: item && structuredClone(item) };
    }
    if (command instanceof PutCommand) {
      calls.put++;
      items.set(id(command.input.Item as { pk: string; sk: string }), structuredClone(command.input.Item as Record<string, any>));
      return {};
    }
    if (command instanceof UpdateCommand) {
      // Only the rate counter's update: ADD #count :n, if absent or #count <= :room.
      calls.update++;
      const key = id(command.input.Key as { pk: string; sk: string });
      const values = command.input.ExpressionAttributeValues as { ':n': number; ':room': number };
      const item = items.get(key);
      if (item && !(item.count <= values[':room'])) throw new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
      const count = (item?.count ?? 0) + values[':n'];
      items.set(key, { ...item, count });
      return { Attributes: { count } };
    }
    throw new Error(`unexpected command ${String(command)}`);
  };
  return { store: { client: { send } as unknown as DynamoDBDocumentClient, tableName: 'table' }, calls, items };
}

describe('findActiveKey', () => {
  it('answers 100 requests presenting one key at once with one read, and reads again for the next', async () => {
    // Prepare
    const { store, calls } = fakeTable();
    const { apiKey, key } = await createApiKey(store, { tier: 'pro' });

    // Act
    const found = await Promise.all(Array.from({ length: 100 }, () => findActiveKey(store, `Bearer ${apiKey}`)));
    const later = await findActiveKey(store, `Bearer ${apiKey}`);

    // Assess
    expect(found.every((k) => k?.keyId === key.keyId)).toBe(true);
    expect(later?.keyId).toBe(key.keyId);
    expect(calls.get).toBe(2);
  });

  it('reads keys presented at once separately, and refuses an unknown one', async () => {
    // Prepare
    const { store, calls } = fakeTable();
    const [a, b] = await Promise.all([createApiKey(store, { tier: 'pro' }), createApiKey(store, { tier: 'free' })]);

    // Act
    const [foundA, foundB, unknown] = await Promise.all([
      findActiveKey(store, `Bearer ${a.apiKey}`),
      findActiveKey(store, `Bearer ${b.apiKey}`),
      findActiveKey(store, `Bearer pdfk_${'x'.repeat(40)}`),
    ]);

    // Assess
    expect(foundA?.keyId).toBe(a.key.keyId);
    expect(foundB?.keyId).toBe(b.key.keyId);
    expect(unknown).toBeUndefined();
    expect(calls.get).toBe(3);
  });
});

describe('admitRequest', () => {
  const now = new Date('2026-11-28T10:00:30Z');

  it('admits exactly the limit of 400 simultaneous requests in a few writes, each told what remains', async () => {
    // Prepare
    const { store, calls } = fakeTable();

    // Act
    const states = await Promise.all(Array.from({ length: 400 }, () => admitRequest(store, { keyId: 'key_a', limit: 150, now })));

    // Assess
    const admitted = states.filter((state) => state.admitted);
    expect(admitted).toHaveLength(150);
    expect(admitted.map((state) => state.remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(states.every((state) => state.limit === 150 && state.resetSeconds === 30)).toBe(true);
    expect(calls.update).toBeLessThan(10);
  });

  it('admits a group only as far as the room left by other writers, and refuses the rest', async () => {
    // Prepare: another process already counted 97 of 100 in this window
    const { store, items } = fakeTable();
    await admitRequest(store, { keyId: 'key_a', limit: 100, now });
    const [counter] = items.keys();
    items.set(counter!, { ...items.get(counter!), count: 97 });

    // Act
    const states = await Promise.all(Array.from({ length: 10 }, () => admitRequest(store, { keyId: 'key_a', limit: 100, now })));

    // Assess
    expect(states.filter((state) => state.admitted)).toHaveLength(3);
    expect(items.get(counter!)?.count).toBe(100);
  });

  it('answers one request alone with one write, as before', async () => {
    // Prepare
    const { store, calls } = fakeTable();

    // Act
    const first = await admitRequest(store, { keyId: 'key_a', limit: 2, now });
    const second = await admitRequest(store, { keyId: 'key_a', limit: 2, now });
    const third = await admitRequest(store, { keyId: 'key_a', limit: 2, now });

    // Assess
    expect([first, second, third].map((state) => [state.admitted, state.remaining])).toEqual([
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(calls.update).toBe(3);
  });

  it('keeps the counters of different keys and budgets apart', async () => {
    // Prepare
    const { store } = fakeTable();

    // Act
    const states = await Promise.all([
      ...Array.from({ length: 5 }, () => admitRequest(store, { keyId: 'key_a', limit: 3, now })),
      ...Array.from({ length: 5 }, () => admitRequest(store, { keyId: 'key_b', limit: 3, now })),
      ...Array.from({ length: 5 }, () => admitRequest(store, { keyId: 'key_a', limit: 3, now, budget: 'previews' })),
    ]);

    // Assess
    expect([0, 1, 2].map((part) => states.slice(part * 5, part * 5 + 5).filter((state) => state.admitted).length)).toEqual([3, 3, 3]);
  });
});
