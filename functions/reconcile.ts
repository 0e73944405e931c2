import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { reconcileQuotas, type ReconciliationReport } from '#lib/accounts/reconcile.ts';
import { counterStore, pdfStore, signingKeyStore } from '#lib/aws/stores.ts';
import { isCompletionMessage, type BulkMessage } from '#lib/aws/bulk-queue.ts';
import { completeBulkJob, completeExpiredBulkJobs, giveUpChunk } from '#lib/bulk/bulk-completion.ts';
import { enqueueStrandedBulkJobs } from '#lib/bulk/bulk-submission.ts';
import { abandonExpiredJobs, endGivenUpJob, type GivenUpInvocation } from '#lib/jobs/job-endings.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { retryKeyDeletions } from '#lib/signatures/signing-keys.ts';

const isQueueBatch = (event: unknown): event is SQSEvent =>
  Array.isArray((event as SQSEvent | null)?.Records) && (event as SQSEvent).Records.every((record) => record.eventSource === 'aws:sqs');

/**
 * The reconcile function, two ways (cdk/stack.ts):
 * - from the job function's failure queue (an SQS event source): each job whose invocation Lambda
 *   gave up on is ended at once, charged for what it stored, its webhook sent (lib/jobs/job-endings.ts);
 *   and from the bulk queue's dead-letter queue: each chunk every delivery failed is ended
 *   (lib/bulk/bulk-completion.ts), so that its bulk job completes.
 *   A record that could not be handled is reported back and comes again.
 * - on a schedule: asynchronous jobs no run could finish are ended, charged for what they stored;
 *   then quota held by requests that died is settled by the PDF records they wrote
 *   (lib/accounts/reconcile.ts); bulk jobs whose submission died before their chunks were all queued
 *   are queued again (or fail, returning their reservation, when they cannot be); deleted signing
 *   keys whose KMS key's deletion failed get it scheduled (lib/signatures/signing-keys.ts). What was
 *   repaired is logged. Every step runs whatever the others did, and each job (each reservation) on its own:
 *   one job's error is logged and skipped, never stops the others. Once all have run, an invocation
 *   that met errors fails, so that the function's Errors alarm fires (cdk/constructs/alarms.ts); its
 *   retries repeat only what is still to do.
 */
/** A bulk job stored this long ago whose chunks are not all queued belongs to a submission that died. */
const STRANDED_BULK_JOB_MS = 2 * 60_000;

type ScheduledReport = Omit<ReconciliationReport, 'errors'> & { abandonedJobs: number; requeuedBulkJobs: number };

export const handler = middy<unknown, ScheduledReport | SQSBatchResponse>()
  .use(injectLambdaContext(logger, { resetKeys: true, logEvent: false }))
  .handler(async (event) => {
    if (isQueueBatch(event)) {
      const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
      for (const record of event.Records) {
        try {
          const body = JSON.parse(record.body) as GivenUpInvocation | BulkMessage;
          // The bulk queue's dead letters are chunks every delivery failed: each is ended, its job's
          // completion asked for if it was the last; and completions every delivery failed: the job
          // is completed here, without its archive.
          if ('complete' in body && isCompletionMessage(body)) {
            if ((await completeBulkJob(body.job_id, { force: body.force === true })) === 'retry') batchItemFailures.push({ itemIdentifier: record.messageId });
          } else if ('chunk' in body) await giveUpChunk(body);
          else await endGivenUpJob(body);
        } catch (error) {
          logger.error('given-up job not ended', { message_id: record.messageId, ...errorFields(error) });
          batchItemFailures.push({ itemIdentifier: record.messageId });
        }
      }
      return { batchItemFailures };
    }
    const now = new Date();
    const failures: string[] = [];
    /** One step, whatever the others did: its failure is logged and named, and the next step runs. */
    const step = async <T extends { errors: number }>(name: string, run: () => Promise<T>, nothing: T): Promise<T> => {
      try {
        const done = await run();
        if (done.errors > 0) failures.push(`${name}: ${done.errors} failed`);
        return done;
      } catch (error) {
        logger.error(`reconcile step failed: ${name}`, errorFields(error));
        failures.push(`${name}: ${(error as Error)?.message ?? String(error)}`);
        return nothing;
      }
    };
    const abandoned = await step('abandon expired jobs', () => abandonExpiredJobs(now), { abandoned: 0, errors: 0 });
    const completed = await step('complete expired bulk jobs', () => completeExpiredBulkJobs(now), { asked: 0, errors: 0 });
    const swept = await step('queue stranded bulk jobs', () => enqueueStrandedBulkJobs(now, STRANDED_BULK_JOB_MS), { queued: 0, failed: 0, errors: 0 });
    const { errors: _errors, ...quota } = await step('reconcile quotas', () => reconcileQuotas({ counters: counterStore(), pdfs: pdfStore() }, now), {
      repaired: 0,
      returned: 0,
      charged: 0,
      errors: 0,
    });
    const keyDeletions = await step('schedule deleted signing keys\' KMS deletion', () => retryKeyDeletions(signingKeyStore(), now), { scheduled: 0, errors: 0 });
    if (keyDeletions.scheduled > 0) logger.info('deleted signing keys\' KMS keys scheduled for deletion', { scheduled: keyDeletions.scheduled });
    // Bulk jobs that could not be queued ended failed: abandoned too.
    const report: ScheduledReport = { ...quota, abandonedJobs: abandoned.abandoned + completed.asked + swept.failed, requeuedBulkJobs: swept.queued };
    if (failures.length > 0) {
      logger.error('reconcile finished with errors', { ...report, failures });
      throw new Error(`The reconcile did everything else, but: ${failures.join('; ')}`);
    }
    return report;
  });
