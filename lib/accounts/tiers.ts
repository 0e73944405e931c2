/**
 * The tier table (decisions.md "Tiers"): the single source of truth that every check reads.
 */
export const TIER_NAMES = ['free', 'starter', 'pro', 'enterprise'] as const;
export type TierName = (typeof TIER_NAMES)[number];

export interface TierLimits {
  /** Most items accepted in one batch request. */
  readonly maxBatchSize: number;
  /** Requests admitted per minute, per key, all endpoints together. */
  readonly rateLimitPerMinute: number;
  /** PDFs that may be generated per calendar month (UTC). */
  readonly monthlyQuota: number;
  /** How long a download link stays valid, which is also how long the PDF is kept. */
  readonly linkValidityDays: number;
}

export const TIERS: Readonly<Record<TierName, TierLimits>> = {
  free: { maxBatchSize: 10, rateLimitPerMinute: 10, monthlyQuota: 100, linkValidityDays: 7 },
  starter: { maxBatchSize: 50, rateLimitPerMinute: 60, monthlyQuota: 5_000, linkValidityDays: 30 },
  pro: { maxBatchSize: 100, rateLimitPerMinute: 300, monthlyQuota: 50_000, linkValidityDays: 90 },
  enterprise: { maxBatchSize: 100, rateLimitPerMinute: 1_000, monthlyQuota: 1_000_000, linkValidityDays: 365 },
};

/** Every retention period in use: one S3 prefix and one lifecycle rule each. */
export const RETENTION_DAYS: readonly number[] = [...new Set(Object.values(TIERS).map((t) => t.linkValidityDays))];

export function isTierName(value: unknown): value is TierName {
  return typeof value === 'string' && (TIER_NAMES as readonly string[]).includes(value);
}
