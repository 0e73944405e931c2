/**
 * Per-key rate limiting in fixed one-minute windows: one budget shared by every authenticated
 * endpoint, one of its own for polling jobs (`GET /v1/jobs/{job_id}`) and one for template previews
 * (`POST /v1/templates/{template_id}/preview`), lib/accounts/tiers.ts.
 *
 * Admission is one conditional atomic increment: the counter only moves while it is under the
 * limit, so with a limit of N at most N requests are admitted per window however many arrive at
 * once (no read-then-write race). Requests of one key arriving in one process while its counter is
 * being written share the next write (see drain). Window counters expire by TTL.
 *
 * Fixed windows can admit up to 2N within a minute that straddles two windows; that burst is
 * bounded and accepted in exchange for one write per request (a sliding log would need N items).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export const RATE_WINDOW_SECONDS = 60;

export interface CounterStore {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

export interface RateLimitState {
  readonly admitted: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Whole seconds until the current window ends (at least 1): when a refused request would be admitted. */
  readonly resetSeconds: number;
}

/** The key's counters: `requests` for every endpoint, `job-polls` for reading jobs, `previews` for template previews. */
export type RateBudget = 'requests' | 'job-polls' | 'previews';

export async function admitRequest(
  store: CounterStore,
  input: { keyId: string; limit: number; now: Date; budget?: RateBudget },
): Promise<RateLimitState> {
  const nowMs = input.now.getTime();
  const windowMs = RATE_WINDOW_SECONDS * 1000;
  const windowStart = Math.floor(nowMs / windowMs) * windowMs;
  const resetSeconds = Math.max(1, Math.ceil((windowStart + windowMs - nowMs) / 1000));
  const counter: WindowCounter = {
    key: { pk: `RATE#${input.keyId}`, sk: `${input.budget && input.budget !== 'requests' ? `${input.budget}#` : ''}${windowStart / 1000}` },
    limit: input.limit,
    // Kept a window past its end so that a late clock still finds it, then deleted.
    ttl: Math.floor((windowStart + 2 * windowMs) / 1000),
  };
  const id = `${store.tableName}\n${counter.key.pk}\n${counter.key.sk}\n${counter.limit}`;
  let line = lines.get(id);
  if (!line) {
    line = { writing: false, next: [] };
    lines.set(id, line);
  }
  const waiting = new Promise<RateLimitState>((resolve, reject) => line.next.push({ resolve, reject, resetSeconds }));
  if (!line.writing) void drain(store, id, line, counter);
  return waiting;
}

/** One window's counter of one key and budget. */
interface WindowCounter {
  readonly key: { readonly pk: string; readonly sk: string };
  readonly limit: number;
  readonly ttl: number;
}

interface Waiter {
  readonly resolve: (state: RateLimitState) => void;
  readonly reject: (error: unknown) => void;
  readonly resetSeconds: number;
}

/** Requests waiting for their counter's write, per counter, while a write of it is under way. */
interface Line {
  writing: boolean;
  next: Waiter[];
}
const lines = new Map<string, Line>();

/**
 * Writes a counter's increments one write at a time: the first request's at once, and those that
 * arrived while it was under way together in the next (group commit). Where one process serves many
 * requests at once (the local stack), a key's flood of hundreds of simultaneous requests so costs a
 * few writes instead of hundreds queued ahead of everything else; a Lambda container serves one
 * request at a time, so there every request has its own write, as before. Admission stays exact.
 */
async function drain(store: CounterStore, id: string, line: Line, counter: WindowCounter): Promise<void> {
  line.writing = true;
  while (line.next.length > 0) {
    // Never more in one write than the limit, so a group on a counter not yet made cannot pass it.
    const group = line.next.splice(0, Math.max(1, counter.limit));
    try {
      await admitGroup(store, counter, group);
    } catch (error) {
      for (const waiter of group) waiter.reject(error);
    }
  }
  line.writing = false;
  lines.delete(id);
}

/**
 * Admits a group of requests with one conditional increment by the group's size, if all of them
 * fit. If not, the counter is read (it only grows within its window) and the first of them, as many
 * as there is room for, try one increment together (one each, should another writer have taken
 * some of that room meanwhile); the others are refused.
 */
async function admitGroup(store: CounterStore, counter: WindowCounter, group: readonly Waiter[]): Promise<void> {
  const admit = (members: readonly Waiter[], count: number) =>
    members.forEach((waiter, i) =>
      waiter.resolve({ admitted: true, limit: counter.limit, remaining: Math.max(0, counter.limit - (count - members.length + i + 1)), resetSeconds: waiter.resetSeconds }),
    );
  const refuse = (waiter: Waiter) => waiter.resolve({ admitted: false, limit: counter.limit, remaining: 0, resetSeconds: waiter.resetSeconds });
  const count = await increment(store, counter, group.length);
  if (count !== undefined) return admit(group, count);
  if (group.length === 1) return refuse(group[0]!);
  const { Item } = await store.client.send(new GetCommand({ TableName: store.tableName, Key: counter.key, ConsistentRead: true }));
  const room = Math.max(0, counter.limit - Number(Item?.count ?? 0));
  const fitting = group.slice(0, room);
  group.slice(room).forEach(refuse);
  if (fitting.length === 0) return;
  const together = await increment(store, counter, fitting.length);
  if (together !== undefined) return admit(fitting, together);
  await Promise.all(
    fitting.map(async (waiter) => {
      const one = await increment(store, counter, 1);
      if (one === undefined) refuse(waiter);
      else admit([waiter], one);
    }),
  );
}

/** Adds `n` to the counter if it stays within the limit: the count after, or undefined if it would not. */
async function increment(store: CounterStore, counter: WindowCounter, n: number): Promise<number | undefined> {
  try {
    const { Attributes } = await store.client.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: counter.key,
        UpdateExpression: 'ADD #count :n SET #ttl = if_not_exists(#ttl, :ttl)',
        ConditionExpression: 'attribute_not_exists(#count) OR #count <= :room',
        ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':n': n, ':room': counter.limit - n, ':ttl': counter.ttl },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.count ?? counter.limit);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/** The standard rate-limit headers for a state. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
    ...(!state.admitted && { 'Retry-After': String(state.resetSeconds) }),
  };
}
