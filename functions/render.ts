import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { pdfStore } from '#lib/aws/stores.ts';
import type { RenderInvocation, RenderOutcome } from '#lib/documents/batch.ts';
import { renderItem } from '#lib/documents/render-item.ts';
import { logger } from '#lib/observability/logger.ts';
import { flushMetrics } from '#lib/observability/metrics.ts';

/** The render function: one batch item per invocation, invoked by the batch function only. */
export const handler = middy<RenderInvocation, RenderOutcome>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .use(flushMetrics())
  .handler((invocation) => renderItem(pdfStore(), invocation));
