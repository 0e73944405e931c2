import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { ChunkMessage } from '#lib/aws/bulk-queue.ts';
import { runChunk } from '#lib/bulk/bulk-worker.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { flushMetrics } from '#lib/observability/metrics.ts';

/**
 * The bulk worker: Lambda's event source mapping on the bulk queue invokes it with chunks of bulk
 * jobs (lib/bulk/bulk-worker.ts). A chunk it could not finish is named in `batchItemFailures`
 * (ReportBatchItemFailures): only that message comes back; the others are deleted.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .use(flushMetrics())
  .handler(async (event, context) => {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        if ((await runChunk(JSON.parse(record.body) as ChunkMessage, context)) === 'retry') batchItemFailures.push({ itemIdentifier: record.messageId });
      } catch (error) {
        logger.error('bulk chunk failed; it comes back', { message_id: record.messageId, ...errorFields(error) });
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  });
