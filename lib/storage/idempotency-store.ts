/**
 * Where idempotent responses are kept (lib/api/idempotency.ts), shared by the CDK stack and the
 * local stack so the two cannot drift: Powertools' records in a table of their own, one item per
 * (API key, Idempotency-Key), removed by TTL after the window; responses too large for an item in
 * the bucket, under their own prefix, removed by a lifecycle rule.
 */
export const IDEMPOTENCY_TABLE = { partitionKey: 'id', ttlAttribute: 'expiration' } as const;
/** How long a response is kept for replay (shared/spec/beyond.md: 24 hours). */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/** The bucket prefix of responses too large for their record. */
export const IDEMPOTENT_BODY_PREFIX = 'idempotency/';
