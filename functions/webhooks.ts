import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { webhookDeps } from '#lib/jobs/job-webhooks.ts';
import { logger } from '#lib/observability/logger.ts';
import { settings } from '#lib/settings.ts';
import { sendDueDeliveries } from '#lib/webhooks/deliveries.ts';

/**
 * The webhooks function, every minute (cdk/stack.ts): tries the webhook deliveries that are due
 * (lib/webhooks/deliveries.ts), first tries a job could not make itself and retries, fairly between
 * API keys, and goes on taking those that come due while it has time for another try.
 */
export const handler = middy<unknown, { tried: number }>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .handler(async (_event, context) => ({
    tried: await sendDueDeliveries(webhookDeps(), {
      concurrency: settings.webhookConcurrency,
      perKeyConcurrency: settings.webhookConcurrencyPerKey,
      pollIntervalMs: settings.webhookDispatchIntervalMs,
      remainingMs: () => context.getRemainingTimeInMillis(),
    }),
  }));
