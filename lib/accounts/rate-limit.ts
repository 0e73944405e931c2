/**
 * Per-key rate limiting in fixed one-minute windows: one budget shared by every authenticated
 * endpoint, one of its own for polling jobs (`GET /v1/jobs/{job_id}`) and one for template previews
 * (`POST /v1/templates/{template_id}/preview`), lib/accounts/tiers.ts.
 *
 * Admission is one conditional atomic increment: the counter only moves while it is under the
 * limit, so with a limit of N at most N requests are admitted per window however many arrive at
 * once (no read-then-write race). Window counters expire by TTL.
 *
 * Fixed windows can admit up to 2N within a minute that straddles two windows; that burst is
 * bounded and accepted in exchange for one write per request (a sliding log would need N items).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

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
  try {
    const { Attributes } = await store.client.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: `RATE#${input.keyId}`, sk: `${input.budget && input.budget !== 'requests' ? `${input.budget}#` : ''}${windowStart / 1000}` },
        UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)',
        ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
        ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':one': 1,
          ':limit': input.limit,
          // Kept a window past its end so that a late clock still finds it, then deleted.
          ':ttl': Math.floor((windowStart + 2 * windowMs) / 1000),
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const count = Number(Attributes?.count ?? input.limit);
    return { admitted: true, limit: input.limit, remaining: Math.max(0, input.limit - count), resetSeconds };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return { admitted: false, limit: input.limit, remaining: 0, resetSeconds };
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
