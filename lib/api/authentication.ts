/**
 * Authentication by API key, for the routes that need one: the key (401 without an active one),
 * then the key's per-minute rate limit (429). Passed to `apiHandler` by those routes' functions
 * (lib/api/middlewares.ts), so only they carry the key and counter lookups.
 */
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { findActiveKey, limitsFor, type ApiKey } from '#lib/accounts/keys.ts';
import { admitRequest, rateLimitHeaders, type RateBudget } from '#lib/accounts/rate-limit.ts';
import { JOB_POLLS_PER_MINUTE, TEMPLATE_LIMITS } from '#lib/accounts/tiers.ts';
import { counterStore, keyStore } from '#lib/aws/stores.ts';
import { logger } from '#lib/observability/logger.ts';
import { ApiError, unauthorized } from './errors.ts';
import { header } from './http.ts';
import type { AuthenticatedContext, Authentication, Event, HeadersContext, Result } from './middlewares.ts';

/** A budget's limit per minute for a key. */
const LIMIT_OF: Readonly<Record<RateBudget, (key: ApiKey) => number>> = {
  requests: (key) => limitsFor(key).rateLimitPerMinute,
  'job-polls': (key) => Math.max(JOB_POLLS_PER_MINUTE[key.tier], limitsFor(key).rateLimitPerMinute),
  previews: (key) => TEMPLATE_LIMITS[key.tier].previewsPerMinute,
};
const WHAT_OF: Readonly<Record<RateBudget, string>> = { requests: 'requests', 'job-polls': 'job polls', previews: 'template previews' };

/** Admits the request under the key's per-minute limit of `budget` or refuses it with 429 and `retry_after`. */
export function rateLimit(budget: RateBudget = 'requests'): MiddlewareObj<Event, Result, Error, AuthenticatedContext & HeadersContext> {
  return {
    before: async (request) => {
      const state = await admitRequest(counterStore(), {
        keyId: request.context.apiKey.keyId,
        limit: LIMIT_OF[budget](request.context.apiKey),
        now: new Date(),
        budget,
      });
      request.context.responseHeaders = { ...request.context.responseHeaders, ...rateLimitHeaders(state) };
      if (!state.admitted) {
        throw new ApiError(
          'rate_limit_exceeded',
          `Rate limit of ${state.limit} ${WHAT_OF[budget]} per minute exceeded. Retry in ${state.resetSeconds} s.`,
          { extra: { retry_after: state.resetSeconds } },
        );
      }
    },
  };
}

/** Refuses the request with 401 unless it carries an active API key; attaches the key otherwise. */
export function authenticate(): MiddlewareObj<Event, Result, Error, AuthenticatedContext> {
  return {
    before: async (request) => {
      const key = await findActiveKey(keyStore(), header(request.event, 'authorization'));
      if (!key) throw unauthorized();
      request.context.apiKey = key;
      logger.appendKeys({ key_id: key.keyId });
    },
  };
}

/** A Bearer API key, then its rate limit: what every keyed route of the API asks. */
export const byApiKey: Authentication = {
  middlewares: () => [authenticate() as MiddlewareObj<Event, Result, Error, Context>, rateLimit() as MiddlewareObj<Event, Result, Error, Context>],
};

/** A Bearer API key, then its job-polling budget (not its requests'): `GET /v1/jobs/{job_id}`. */
export const byApiKeyPollingJobs: Authentication = {
  middlewares: () => [authenticate() as MiddlewareObj<Event, Result, Error, Context>, rateLimit('job-polls') as MiddlewareObj<Event, Result, Error, Context>],
};

/**
 * A Bearer API key, then its template-preview budget (not its requests'): previews render with
 * Chromium but store and charge nothing, so they have a per-minute budget of their own by tier.
 */
export const byApiKeyPreviewing: Authentication = {
  middlewares: () => [authenticate() as MiddlewareObj<Event, Result, Error, Context>, rateLimit('previews') as MiddlewareObj<Event, Result, Error, Context>],
};
