/**
 * Monthly PDF quotas: reserved before rendering, settled with what was really stored.
 *
 * The month's counter item (`QUOTA#<key id>` / `YYYY-MM`) holds `used`, and one entry per request in
 * flight, its reservation (`r_<id>`: how many PDFs it still holds, and when it expires). Every change
 * is one conditional write to that one item, so it is atomic without transactions (which dynalite
 * lacks), and `used` always equals the PDFs whose records were written plus what live reservations
 * hold:
 * - reserve: `used += n` only if it stays within the quota, and the entry is written with it, so
 *   concurrent requests can never overdraw, and nothing is rendered for a request that does not fit;
 * - settle: when the request is done, the PDFs it did not store are given back and its entry goes,
 *   in the same write;
 * - repair: a request that died (crash, kill -9, a lost container) leaves its entry behind until it
 *   expires (RESERVATION_LIFETIME_MS, longer than any request can run); then the PDF records written
 *   under it, which are the truth, decide what it costs, and the entry goes. Repair runs when a
 *   request would be refused for quota, at local start-up and on a schedule (lib/accounts/reconcile.ts).
 *
 * The period is the calendar month in UTC; a new month is a new counter, so the quota rolls over by itself.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, paginateQuery, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ENTITY_INDEX } from '#lib/storage/table.ts';
import { randomBase62 } from '#lib/random.ts';
import type { CounterStore } from './rate-limit.ts';

/** Counters are kept this long after their month for usage history, then expire. */
const COUNTER_RETENTION_DAYS = 400;

/** `YYYY-MM` of the UTC month containing `now`. */
export function quotaPeriod(now: Date): string {
  return now.toISOString().slice(0, 7);
}

/** 00:00:00Z on the first day of the month after `now`. */
export function quotaResetAt(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

const counterKey = (keyId: string, period: string) => ({ pk: `QUOTA#${keyId}`, sk: period });
/** The month counters' partition in the entity index. */
const COUNTER_ENTITY = 'QUOTA';

/**
 * How long a request's reservation lives: longer than any request can hold it (the longest API
 * function timeout is 30 s), so one that outlives it belongs to a request that died.
 */
export const RESERVATION_LIFETIME_MS = 5 * 60_000;

export interface QuotaReservation {
  readonly keyId: string;
  /** The month charged, so that settling after a month boundary goes back to the right month. */
  readonly period: string;
  /** Names the reservation's entry on the counter, and the PDF records written under it. */
  readonly id: string;
  readonly count: number;
}

/** A reservation's entry on the counter item. */
interface ReservationEntry {
  /** PDFs reserved: what `used` holds for the reservation until it is closed. */
  readonly held: number;
  /** Epoch ms after which the reservation belongs to a request that died. */
  readonly expires: number;
  /**
   * Its lifetime in ms when it is not a request's RESERVATION_LIFETIME_MS: an asynchronous job's
   * (lib/jobs/jobs.ts), which outlives the request that made it and is settled by the job.
   */
  readonly lifetime?: number;
}

const RESERVATION_ATTRIBUTE = /^r_([0-9A-Za-z]+)$/;
const entryName = (reservationId: string) => `r_${reservationId}`;

export type ReserveResult =
  | { readonly reserved: true; readonly reservation: QuotaReservation; readonly used: number }
  | { readonly reserved: false; readonly remaining: number; readonly resetAt: Date };

export interface ReserveInput {
  readonly keyId: string;
  readonly monthlyQuota: number;
  readonly count: number;
  readonly now: Date;
  /** How long the work it is for may hold it (an asynchronous job's); a request's RESERVATION_LIFETIME_MS by default. */
  readonly lifetimeMs?: number;
}

export async function reserveQuota(store: CounterStore, input: ReserveInput): Promise<ReserveResult> {
  const period = quotaPeriod(input.now);
  const resetAt = quotaResetAt(input.now);
  const refuse = async (): Promise<ReserveResult> => {
    const used = await quotaUsed(store, input.keyId, input.now);
    return { reserved: false, remaining: Math.max(0, input.monthlyQuota - used), resetAt };
  };
  // More than the whole quota can never fit (and would pass the condition on a fresh counter).
  if (input.count > input.monthlyQuota) return refuse();
  const id = randomBase62(16);
  const lifetime = input.lifetimeMs ?? RESERVATION_LIFETIME_MS;
  const entry: ReservationEntry = {
    held: input.count,
    expires: input.now.getTime() + lifetime,
    ...(lifetime !== RESERVATION_LIFETIME_MS && { lifetime }),
  };
  try {
    const { Attributes } = await store.client.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: counterKey(input.keyId, period),
        UpdateExpression: 'ADD #used :count SET #ttl = if_not_exists(#ttl, :ttl), #entry = :entry, #counters = :counters, #month = :month',
        ConditionExpression: 'attribute_not_exists(#used) OR #used <= :ceiling',
        ExpressionAttributeNames: {
          '#used': 'used',
          '#ttl': 'ttl',
          '#entry': entryName(id),
          '#counters': ENTITY_INDEX.partitionKey,
          '#month': ENTITY_INDEX.sortKey,
        },
        ExpressionAttributeValues: {
          ':count': input.count,
          ':ceiling': input.monthlyQuota - input.count,
          ':ttl': Math.floor(resetAt.getTime() / 1000) + COUNTER_RETENTION_DAYS * 86_400,
          ':entry': entry,
          // Listed in the entity index by month, so reconciliation reads the month's counters, not the table.
          ':counters': COUNTER_ENTITY,
          ':month': `${period}#${input.keyId}`,
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const used = Number(Attributes?.used ?? input.count);
    return { reserved: true, reservation: { keyId: input.keyId, period, id, count: input.count }, used };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return refuse();
  }
}

/**
 * Removes a reservation's entry and moves `used` by `change`, in one write, only if the entry is
 * still there: each reservation is closed once, by its request or by repair, whichever comes first.
 */
async function closeReservation(store: CounterStore, reservation: QuotaReservation, change: number): Promise<boolean> {
  try {
    await store.client.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: counterKey(reservation.keyId, reservation.period),
        UpdateExpression: 'ADD #used :change REMOVE #entry',
        ConditionExpression: 'attribute_exists(#entry)',
        ExpressionAttributeNames: { '#used': 'used', '#entry': entryName(reservation.id) },
        ExpressionAttributeValues: { ':change': change },
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return false;
  }
}

/**
 * Ends a reservation: gives back the `unused` PDFs it did not store and removes its entry, in one
 * write. A reservation already repaired (its request outlived it) is left as repair settled it.
 */
export async function settleReservation(store: CounterStore, reservation: QuotaReservation, unused: number): Promise<void> {
  await closeReservation(store, reservation, -unused);
}

/** A reservation whose request died: what it reserved (`reservation.count`), and when it expired. */
export interface ExpiredReservation {
  readonly reservation: QuotaReservation;
  /** Epoch ms when it expired. */
  readonly expires: number;
  /** How long it lived: the PDFs it paid for were made in the `lifetimeMs` before `expires`. */
  readonly lifetimeMs: number;
}

/** The reservations on a key's month counter that have outlived their requests. */
export async function expiredReservations(store: CounterStore, keyId: string, period: string, now: Date): Promise<ExpiredReservation[]> {
  const { Item } = await store.client.send(
    new GetCommand({ TableName: store.tableName, Key: counterKey(keyId, period), ConsistentRead: true }),
  );
  return expiredIn(Item ?? {}, keyId, period, { now });
}

/**
 * When reservations count as dead: once expired, or, with `requestsDeadBy`, a request's (not a
 * job's) already when it would be expired by then.
 */
export interface DeadBy {
  readonly now: Date;
  readonly requestsDeadBy?: Date;
}

function expiredIn(item: Record<string, unknown>, keyId: string, period: string, { now, requestsDeadBy }: DeadBy): ExpiredReservation[] {
  return Object.entries(item).flatMap(([name, value]) => {
    const id = RESERVATION_ATTRIBUTE.exec(name)?.[1];
    const entry = value as ReservationEntry;
    if (!id || typeof entry?.expires !== 'number') return [];
    const lifetimeMs = typeof entry.lifetime === 'number' ? entry.lifetime : RESERVATION_LIFETIME_MS;
    const cutoff = entry.lifetime === undefined && requestsDeadBy ? requestsDeadBy : now;
    if (entry.expires > cutoff.getTime()) return [];
    return [{ reservation: { keyId, period, id, count: Number(entry.held) }, expires: entry.expires, lifetimeMs }];
  });
}

/**
 * Settles a dead request's reservation by the truth: it costs exactly the PDF records written under
 * it (`stored`), where the counter held what it reserved. Returns the correction made to `used`
 * (stored minus reserved), or undefined when the reservation was already closed.
 */
export async function repairReservation(store: CounterStore, expired: ExpiredReservation, stored: number): Promise<number | undefined> {
  const correction = stored - expired.reservation.count;
  return (await closeReservation(store, expired.reservation, correction)) ? correction : undefined;
}

/**
 * Reservations that expired by `now`, across keys (the scheduled reconciliation): read from the
 * counters of this month and the last (a reservation made just before midnight UTC of the 1st
 * belongs to the month before), through the entity index, never by scanning the table.
 */
export async function countersWithExpiredReservations(store: CounterStore, deadBy: DeadBy): Promise<ExpiredReservation[]> {
  const { now } = deadBy;
  const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const found: ExpiredReservation[] = [];
  const pages = paginateQuery(
    { client: store.client },
    {
      TableName: store.tableName,
      IndexName: ENTITY_INDEX.name,
      KeyConditionExpression: '#p = :counters AND #s >= :from',
      ExpressionAttributeNames: { '#p': ENTITY_INDEX.partitionKey, '#s': ENTITY_INDEX.sortKey },
      ExpressionAttributeValues: { ':counters': COUNTER_ENTITY, ':from': quotaPeriod(lastMonth) },
    },
  );
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      found.push(...expiredIn(item, String(item.pk).slice('QUOTA#'.length), String(item.sk), deadBy));
    }
  }
  return found;
}

export async function quotaUsed(store: CounterStore, keyId: string, now: Date): Promise<number> {
  const { Item } = await store.client.send(
    new GetCommand({ TableName: store.tableName, Key: counterKey(keyId, quotaPeriod(now)), ConsistentRead: true }),
  );
  return Number(Item?.used ?? 0);
}

/** Thrown when a request's PDFs do not fit in what remains of the month's quota. */
export class QuotaExceededError extends Error {
  readonly remaining: number;
  readonly resetAt: Date;

  constructor(remaining: number, resetAt: Date) {
    super('Monthly quota exceeded');
    this.name = 'QuotaExceededError';
    this.remaining = remaining;
    this.resetAt = resetAt;
  }
}

/**
 * Reserves `count` PDFs, runs `produce` with the reservation (whose id its PDF records carry), and
 * settles: every reserved PDF that `produce` reports as not stored (or all of them when it throws)
 * is given back. A failure never costs quota; a crash in between is repaired from the records.
 */
/** Repairs a key's reservations left by requests that died; returns how many it repaired. */
export type RepairDeadRequests = (keyId: string, now: Date) => Promise<number>;

/**
 * Reserves `count` PDFs or throws QuotaExceededError (402). Quota held by requests that died is
 * settled (by their records) before anyone is refused.
 */
export async function reserveOrRefuse(store: CounterStore, input: ReserveInput, repairDeadRequests: RepairDeadRequests): Promise<QuotaReservation> {
  let outcome = await reserveQuota(store, input);
  if (!outcome.reserved && (await repairDeadRequests(input.keyId, input.now)) > 0) {
    outcome = await reserveQuota(store, input);
  }
  if (!outcome.reserved) throw new QuotaExceededError(outcome.remaining, outcome.resetAt);
  return outcome.reservation;
}

/** withHeldAndReservedQuota for work that holds nothing but its reservation. */
export function withReservedQuota<T>(
  store: CounterStore,
  input: ReserveInput,
  produce: (reservation: QuotaReservation) => Promise<{ result: T; failed: number }>,
  repairDeadRequests: RepairDeadRequests = async () => 0,
): Promise<T> {
  return withHeldAndReservedQuota(store, input, async () => NOTHING_HELD, (reservation) => produce(reservation), repairDeadRequests);
}

const NOTHING_HELD: Held = { release: async () => {} };

/** Something a request holds while it runs and gives back after (a key's render share). */
export interface Held {
  release(): Promise<void>;
}

/**
 * Reserves the quota for some work, with something else held for the work (a key's render share,
 * lib/accounts/render-leases.ts), taken at the same time as the reservation and given back as it
 * settles: they are different items, so the request waits one round trip for both instead of two,
 * before and after its work. `hold`'s refusal (503 `service_busy`) wins over the quota's (402), as
 * if it were asked first; whichever of the two was granted when the other is refused is given back,
 * the reservation whole, so a refused request is charged nothing. A crash in between leaves an
 * expiring reservation with no record under it, which the reconcile gives back (repairReservation).
 */
export async function withHeldAndReservedQuota<H extends Held, T>(
  store: CounterStore,
  input: ReserveInput,
  hold: () => Promise<H>,
  produce: (reservation: QuotaReservation, held: H) => Promise<{ result: T; failed: number }>,
  repairDeadRequests: RepairDeadRequests = async () => 0,
): Promise<T> {
  const [held, reserved] = await Promise.allSettled([hold(), reserveOrRefuse(store, input, repairDeadRequests)]);
  if (held.status === 'rejected' || reserved.status === 'rejected') {
    await Promise.all([
      held.status === 'fulfilled' ? held.value.release() : undefined,
      reserved.status === 'fulfilled' ? settleReservation(store, reserved.value, input.count) : undefined,
    ]);
    throw held.status === 'rejected' ? held.reason : (reserved as PromiseRejectedResult).reason;
  }
  const reservation = reserved.value;
  let failed = input.count;
  try {
    const produced = await produce(reservation, held.value);
    failed = produced.failed;
    return produced.result;
  } finally {
    // Both given back at once; the settle's failure (if any) is the one that counts, as in withReservedQuota.
    const [settled, released] = await Promise.allSettled([settleReservation(store, reservation, failed), held.value.release()]);
    if (settled.status === 'rejected') throw settled.reason;
    if (released.status === 'rejected') throw released.reason;
  }
}
