/**
 * A key's share of the renderers, across every Lambda container (issue #28): at most its tier's
 * `maxConcurrentRenders` documents of one key render at once, single requests, batches' fan-outs
 * and jobs together. One key's batches then cannot take the account's whole concurrency from
 * everyone else; a request that finds its key's share taken is refused with 503 `service_busy` and
 * `Retry-After` before anything is charged, and a job waits for room in its key's own line.
 *
 * The share is one table item per key holding its leases, each `{ count, until }`: taking some is a
 * read and a write conditional on the item's version (so two takers never both get the last
 * place), giving them back one write. A lease whose holder died (a crashed or timed-out function)
 * lapses at `until`, the longest its holder can live, so a crash never locks a key out for longer.
 *
 * Within one process (the local stack) the render slots' per-key share (lib/render/capacity.ts)
 * orders the documents once admitted; this decides how many are admitted across processes.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomBase62 } from '#lib/random.ts';
import type { CounterStore } from './rate-limit.ts';

const LEASE_SK = 'RENDERS';
/** Tries at the conditional write when other takers of the same key win the race. */
const MAX_TRIES = 8;
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
 */
export async function leaseRenders(
  store: CounterStore,
  input: { keyId: string; want: number; atLeast?: number; ceiling: number; lifetimeMs: number; now?: () => number },
): Promise<RenderLease | RenderShareRefusal> {
  const now = input.now ?? Date.now;
  const atLeast = Math.max(1, Math.min(input.atLeast ?? 1, input.want));
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    const at = now();
    const { Item } = await store.client.send(new GetCommand({ TableName: store.tableName, Key: leaseKey(input.keyId), ConsistentRead: true }));
    const leases = (Item?.leases ?? {}) as Record<string, StoredLease>;
    const version = typeof Item?.version === 'number' ? Item.version : 0;
    const live = Object.entries(leases).filter(([, lease]) => lease.until > at);
    const lapsed = Object.keys(leases).filter((id) => !(leases[id]!.until > at));
    const active = live.reduce((sum, [, lease]) => sum + lease.count, 0);
    const count = Math.min(input.want, input.ceiling - active);
    if (count < atLeast) return { refused: true, active, retryAfterSeconds: RENDER_SHARE_RETRY_AFTER_SECONDS };
    const id = randomBase62(12);
    const until = at + input.lifetimeMs;
    const latest = Math.max(until, ...live.map(([, lease]) => lease.until));
    try {
      await store.client.send(
        new UpdateCommand({
          TableName: store.tableName,
          Key: leaseKey(input.keyId),
          // A new item starts its map; an existing one gets the lease added and what lapsed removed.
          UpdateExpression: Item
            ? `SET leases.#id = :lease, version = :next, #ttl = :ttl${lapsed.length ? ` REMOVE ${lapsed.map((_, i) => `leases.#lapsed${i}`).join(', ')}` : ''}`
            : 'SET leases = :leases, version = :next, #ttl = :ttl',
          ConditionExpression: Item ? 'version = :version' : 'attribute_not_exists(pk)',
          ExpressionAttributeNames: {
            '#ttl': 'ttl',
            ...(Item && { '#id': id }),
            ...Object.fromEntries(lapsed.map((lapsedId, i) => [`#lapsed${i}`, lapsedId])),
          },
          ExpressionAttributeValues: {
            ':next': version + 1,
            ':ttl': Math.ceil(latest / 1000) + 3_600,
            ...(Item ? { ':lease': { count, until }, ':version': version } : { ':leases': { [id]: { count, until } } }),
          },
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) continue; // another taker got there first: read again
      throw error;
    }
    let released: Promise<void> | undefined;
    const release = () =>
      (released ??= store.client
        .send(
          new UpdateCommand({
            TableName: store.tableName,
            Key: leaseKey(input.keyId),
            UpdateExpression: 'REMOVE leases.#id',
            ExpressionAttributeNames: { '#id': id },
          }),
        )
        // Not given back (the table did not answer): the lease lapses at its `until` instead.
        .then(
          () => undefined,
          () => undefined,
        ));
    return { count, release, [Symbol.asyncDispose]: release };
  }
  // Taken by others on every try: the share is as good as full.
  return { refused: true, active: input.ceiling, retryAfterSeconds: RENDER_SHARE_RETRY_AFTER_SECONDS };
}

export const isRefusal = (taken: RenderLease | RenderShareRefusal): taken is RenderShareRefusal => 'refused' in taken;
