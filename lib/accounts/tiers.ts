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
  /**
   * Documents of one key rendered at once, whatever sent them (single requests, batch items, jobs),
   * across every Lambda container (lib/accounts/render-leases.ts): past it a request is refused
   * (503) and a job waits in its key's own line, so one key's batches or never-ready documents
   * cannot take the account's concurrency from the others. Where one process renders for everyone
   * (the local stack), also its share of that process's render slots (lib/render/capacity.ts).
   */
  readonly maxConcurrentRenders: number;
  /**
   * Longest one document of an asynchronous job may take to load, wait for its readiness
   * conditions and print (a synchronous request has RENDER_TIMEOUT_MS). Every wait shares it; past
   * it the job fails `render_timeout`, uncharged. A job's worst case follows from it (docs/async-and-webhooks.md).
   */
  readonly jobRenderTimeoutMs: number;
}

export const TIERS: Readonly<Record<TierName, TierLimits>> = {
  free: { maxBatchSize: 10, rateLimitPerMinute: 10, monthlyQuota: 100, linkValidityDays: 7, maxConcurrentRenders: 2, jobRenderTimeoutMs: 60_000 },
  starter: { maxBatchSize: 50, rateLimitPerMinute: 60, monthlyQuota: 5_000, linkValidityDays: 30, maxConcurrentRenders: 10, jobRenderTimeoutMs: 120_000 },
  pro: { maxBatchSize: 100, rateLimitPerMinute: 300, monthlyQuota: 50_000, linkValidityDays: 90, maxConcurrentRenders: 50, jobRenderTimeoutMs: 240_000 },
  enterprise: { maxBatchSize: 100, rateLimitPerMinute: 1_000, monthlyQuota: 1_000_000, linkValidityDays: 365, maxConcurrentRenders: 100, jobRenderTimeoutMs: 240_000 },
};

/** Every retention period in use: one S3 prefix and one lifecycle rule each. */
export const RETENTION_DAYS: readonly number[] = [...new Set(Object.values(TIERS).map((t) => t.linkValidityDays))];

/**
 * Job polls (`GET /v1/jobs/{job_id}`) admitted per minute, per key: a budget of their own beside the
 * tier's requests per minute (never below a key's own, when it has a higher one), so a client waiting
 * for its job, about once a second, never spends what it needs to generate.
 */
export const JOB_POLLS_PER_MINUTE: Readonly<Record<TierName, number>> = { free: 120, starter: 300, pro: 1_200, enterprise: 3_000 };

/**
 * Stored templates (shared/spec/beyond.md "Templates"), per tier: how many a key may keep, how large
 * one version may be (its html, header and footer, options, data schema and sample data together,
 * as JSON), how many versions of each stay renderable (saving one more drops the oldest beyond it),
 * and how many previews (`POST /v1/templates/{template_id}/preview`, rendered but not stored or
 * charged) a key may ask for per minute, a budget of its own beside its requests'.
 */
export interface TemplateLimits {
  readonly maxTemplates: number;
  readonly maxTemplateBytes: number;
  readonly versionsKept: number;
  readonly previewsPerMinute: number;
}

export const TEMPLATE_LIMITS: Readonly<Record<TierName, TemplateLimits>> = {
  free: { maxTemplates: 10, maxTemplateBytes: 256 * 1024, versionsKept: 10, previewsPerMinute: 10 },
  starter: { maxTemplates: 100, maxTemplateBytes: 1024 * 1024, versionsKept: 50, previewsPerMinute: 30 },
  pro: { maxTemplates: 500, maxTemplateBytes: 2 * 1024 * 1024, versionsKept: 100, previewsPerMinute: 60 },
  enterprise: { maxTemplates: 2_000, maxTemplateBytes: 4 * 1024 * 1024, versionsKept: 500, previewsPerMinute: 120 },
};

/**
 * How many signing keys (lib/signatures/signing-keys.ts) a key may keep: each is a KMS key billed
 * by the month ($1 each), so a free key gets one, enough to try the flow end to end.
 */
export const SIGNING_KEY_LIMITS: Readonly<Record<TierName, { readonly maxSigningKeys: number }>> = {
  free: { maxSigningKeys: 1 },
  starter: { maxSigningKeys: 3 },
  pro: { maxSigningKeys: 10 },
  enterprise: { maxSigningKeys: 50 },
};

export function isTierName(value: unknown): value is TierName {
  return typeof value === 'string' && (TIER_NAMES as readonly string[]).includes(value);
}
