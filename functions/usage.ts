import { limitsFor } from '#lib/accounts/keys.ts';
import { quotaResetAt, quotaUsed } from '#lib/accounts/quota.ts';
import { json } from '#lib/api/http.ts';
import { byApiKey } from '#lib/api/authentication.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { counterStore } from '#lib/aws/stores.ts';

/** GET /v1/usage: the calling key's limits and this month's consumption. */
export const handler = apiHandler({ auth: byApiKey, body: false }, async ({ apiKey }) => {
  const now = new Date();
  const limits = limitsFor(apiKey);
  const used = await quotaUsed(counterStore(), apiKey.keyId, now);
  return json(200, {
    tier: apiKey.tier,
    rate_limit_per_minute: limits.rateLimitPerMinute,
    monthly_quota: limits.monthlyQuota,
    quota_used: used,
    quota_remaining: Math.max(0, limits.monthlyQuota - used),
    quota_reset_at: quotaResetAt(now).toISOString(),
    max_batch_size: limits.maxBatchSize,
    link_validity_days: limits.linkValidityDays,
  });
});
