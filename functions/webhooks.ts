import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { webhookDeps } from '#lib/aws/stores.ts';
import { logger } from '#lib/observability/logger.ts';
import { sendDueDeliveries } from '#lib/webhooks/deliveries.ts';

/**
 * The webhooks function, every minute (cdk/stack.ts): tries each webhook delivery that is due
 * (lib/webhooks/deliveries.ts): first tries a job could not make itself, and retries.
 */
export const handler = middy<unknown, { tried: number }>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .handler(async (_event, context) => ({ tried: await sendDueDeliveries(webhookDeps(), { remainingMs: () => context.getRemainingTimeInMillis() }) }));
