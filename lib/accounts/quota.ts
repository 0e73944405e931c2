/**
 * Monthly PDF quotas: reserved before rendering, given back for every PDF that fails.
 *
 * A reservation is one conditional atomic increment that succeeds only if all the requested PDFs
 * fit in what remains, so concurrent requests can never overdraw the quota, and nothing is
 * rendered for a request that does not fit. The period is the calendar month in UTC; a new month
 * is a new counter, so the quota rolls over by itself.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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

export interface QuotaReservation {
  readonly keyId: string;
  /** The month charged, so that a refund after a month boundary goes back to the right month. */
  readonly period: string;
  readonly count: number;
}

export type ReserveResult =
  | { readonly reserved: true; readonly reservation: QuotaReservation; readonly used: number }
  | { readonly reserved: false; readonly remaining: number; readonly resetAt: Date };

export async function reserveQuota(
  store: CounterStore,
  input: { keyId: string; monthlyQuota: number; count: number; now: Date },
): Promise<ReserveResult> {
  const period = quotaPeriod(input.now);
  const resetAt = quotaResetAt(input.now);
  const refuse = async (): Promise<ReserveResult> => {
    const used = await quotaUsed(store, input.keyId, input.now);
    return { reserved: false, remaining: Math.max(0, input.monthlyQuota - used), resetAt };
  };
  // More than the whole quota can never fit (and would pass the condition on a fresh counter).
  if (input.count > input.monthlyQuota) return refuse();
  try {
    const { Attributes } = await store.client.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: counterKey(input.keyId, period),
        UpdateExpression: 'ADD #used :count SET #ttl = if_not_exists(#ttl, :ttl)',
        ConditionExpression: 'attribute_not_exists(#used) OR #used <= :ceiling',
        ExpressionAttributeNames: { '#used': 'used', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':count': input.count,
          ':ceiling': input.monthlyQuota - input.count,
          ':ttl': Math.floor(resetAt.getTime() / 1000) + COUNTER_RETENTION_DAYS * 86_400,
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const used = Number(Attributes?.used ?? input.count);
    return { reserved: true, reservation: { keyId: input.keyId, period, count: input.count }, used };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return refuse();
  }
}

/** Gives back `count` reserved PDFs that were not produced. */
export async function refundQuota(store: CounterStore, reservation: QuotaReservation): Promise<void> {
  if (reservation.count <= 0) return;
  await store.client.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: counterKey(reservation.keyId, reservation.period),
      UpdateExpression: 'ADD #used :minus',
      ExpressionAttributeNames: { '#used': 'used' },
      ExpressionAttributeValues: { ':minus': -reservation.count },
    }),
  );
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
 * Reserves `count` PDFs, runs `produce`, and gives back every reserved PDF that `produce` reports
 * as not made (or all of them when it throws): a failure never costs quota.
 */
export async function withReservedQuota<T>(
  store: CounterStore,
  input: { keyId: string; monthlyQuota: number; count: number; now: Date },
  produce: () => Promise<{ result: T; failed: number }>,
): Promise<T> {
  const outcome = await reserveQuota(store, input);
  if (!outcome.reserved) throw new QuotaExceededError(outcome.remaining, outcome.resetAt);
  let failed = input.count;
  try {
    const produced = await produce();
    failed = produced.failed;
    return produced.result;
  } finally {
    if (failed > 0) await refundQuota(store, { ...outcome.reservation, count: failed });
  }
}
