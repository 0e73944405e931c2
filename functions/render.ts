import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { pdfStore } from '#lib/aws/stores.ts';
import type { GroupItemOutcome, RenderGroupInvocation, RenderInvocation, RenderOutcome } from '#lib/documents/batch.ts';
import { renderItem, renderItems } from '#lib/documents/render-item.ts';
import { logger } from '#lib/observability/logger.ts';
import { flushMetrics } from '#lib/observability/metrics.ts';
import { preparingWorkspacesAfterAnswer } from '#lib/aws/post-answer-work.ts';

/**
 * The render function, invoked by the batch and job functions only: one batch item per invocation,
 * or several (`items`) when Lambda throttled the batch's fan-out, one outcome each.
 */
export const handler = await preparingWorkspacesAfterAnswer(middy<RenderInvocation | RenderGroupInvocation, RenderOutcome | GroupItemOutcome[]>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .use(flushMetrics())
  .handler((invocation) => ('items' in invocation ? renderItems(pdfStore(), invocation) : renderItem(pdfStore(), invocation))));
