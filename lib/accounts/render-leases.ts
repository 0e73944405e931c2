/**
 * A key's share of the renderers, across every Lambda container (issue #28): at most its tier's
 * `maxConcurrentRenders` documents of one key render at once, single requests, batches' fan-outs
 * and jobs together. One key's batches then cannot take the account's whole concurrency from
 * everyone else; a request that finds its key's share taken is refused with 503 `service_busy` and
 * `Retry-After` before anything is charged, and a job waits for room in its key's own line.
 *
 * The share is one table item per key: `active`, the renders under way, and its leases, each
 * `{ count, until }`. Taking some is an atomic conditional increment (and the lease's entry), giving
 * them back a conditional removal. A lease whose holder died (a crashed or timed-out function)
 * lapses at `until`, the longest its holder can live, and is counted out by the next taker that
 * finds the share full, so a crash never locks a key out for longer.
 *
 * Within one process (the local stack) the render slots' per-key share (lib/render/capacity.ts)
 * orders the documents once admitted; this decides how many are admitted across processes.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomBase62 } from '#lib/random.ts';
import type { CounterStore } from './rate-limit.ts';

const LEASE_SK = 'RENDERS';
/** How long a key's item stays after its last lease was taken (far longer than any lease). */
const ITEM_IDLE_SECONDS = 24 * 3_600;
/** Rounds of "take, else look and tidy" before a taker that keeps losing races gives up. */
const MAX_ROUNDS = 6;
/** What a refusal says to wait: leases are given back as documents finish, within seconds. */
export const RENDER_SHARE_RETRY_AFTER_SECONDS = 2;

interface StoredLease {
  readonly count: number;
  /** Epoch ms after which the lease no longer counts, given back or not. */
  readonly until: number;
}

export interface RenderLease extends AsyncDisposable {
  /** Renders this lease allows at once. */
  readonly count: number;
  /** Gives the renders back (once; also done by `await using`). */
  release(): Promise<void>;
}

export interface RenderShareRefusal {
  readonly refused: true;
  /** Renders of the key under way now (the share is full, or too full for what was asked). */
  readonly active: number;
  readonly retryAfterSeconds: number;
}

const leaseKey = (keyId: string) => ({ pk: `RENDERS#${keyId}`, sk: LEASE_SK });

/**
 * Takes up to `want` renders of `keyId`'s share of `ceiling` for at most `lifetimeMs`: as many as
 * are free, if that is at least `atLeast` (default 1), else a refusal.
 *
 * Taking is one atomic write, `active` raised only if it stays within the ceiling, so any number of
 * takers racing for one key each get an answer at once. Only when that write is refused does the
 * taker read the item: to remove leases whose holders died (their `until` passed; each removal is
 * conditional on the lease still being there, so it is counted out once) and to see how many are
 * free for a smaller take.
 */
export async function leaseRenders(
  store: CounterStore,
  input: { keyId: string; want: number; atLeast?: number; ceiling: number; lifetimeMs: number; now?: () => number },
): Promise<RenderLease | RenderShareRefusal> {
  const now = input.now ?? Date.now;
  const atLeast = Math.max(1, Math.min(input.atLeast ?? 1, input.want));
  let count = Math.min(input.want, input.ceiling);
  let active = 0;
  for (let round = 0; round < MAX_ROUNDS && count >= atLeast; round++) {
    const id = randomBase62(12);
    const lease: StoredLease = { count, until: now() + input.lifetimeMs };
    // The item outlives every lease in it (15 minutes at most) by far; an idle key's goes by itself.
    const ttl = Math.ceil(now() / 1000) + ITEM_IDLE_SECONDS;
    try {
      await store.client.send(
        new UpdateCommand({
          TableName: store.tableName,
          Key: leaseKey(input.keyId),
          UpdateExpression: 'SET leases.#id = :lease, #ttl = :ttl ADD active :count',
          // False too when the key has no item yet: it is made below.
          ConditionExpression: 'active <= :room',
          ExpressionAttributeNames: { '#id': id, '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':lease': lease, ':ttl': ttl, ':count': count, ':room': input.ceiling - count },
        }),
      );
      return grant(store, input.keyId, id, count);
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    const { Item } = await store.client.send(new GetCommand({ TableName: store.tableName, Key: leaseKey(input.keyId), ConsistentRead: true }));
    if (!Item) {
      // The key's first lease: its item, made only if no other taker made it meanwhile.
      try {
        await store.client.send(
          new PutCommand({
            TableName: store.tableName,
            Item: { ...leaseKey(input.keyId), active: count, leases: { [id]: lease }, ttl },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return grant(store, input.keyId, id, count);
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        continue;
      }
    }
    // Full for `count`: tidy away what lapsed, then take what is free.
    const leases = (Item.leases ?? {}) as Record<string, StoredLease>;
    active = typeof Item.active === 'number' ? Item.active : 0;
    for (const [lapsedId, lapsed] of Object.entries(leases).filter(([, held]) => !(held.until > now()))) {
      if (await countOut(store, input.keyId, lapsedId, lapsed.count)) active -= lapsed.count;
    }
    count = Math.min(input.want, input.ceiling - active);
  }
  return { refused: true, active, retryAfterSeconds: RENDER_SHARE_RETRY_AFTER_SECONDS };
}

/** Removes a lease and its renders from the count, once: false if it was gone already. */
async function countOut(store: CounterStore, keyId: string, id: string, count: number): Promise<boolean> {
  try {
    await store.client.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: leaseKey(keyId),
        UpdateExpression: 'REMOVE leases.#id ADD active :less',
        ConditionExpression: 'attribute_exists(leases.#id)',
        ExpressionAttributeNames: { '#id': id },
        ExpressionAttributeValues: { ':less': -count },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

function grant(store: CounterStore, keyId: string, id: string, count: number): RenderLease {
  let released: Promise<void> | undefined;
  // Not given back (the table did not answer): the lease lapses at its `until` instead.
  const release = () => (released ??= countOut(store, keyId, id, count).then(
    () => undefined,
    () => undefined,
  ));
  return { count, release, [Symbol.asyncDispose]: release };
}

export const isRefusal = (taken: RenderLease | RenderShareRefusal): taken is RenderShareRefusal => 'refused' in taken;
