/**
 * How an asynchronous job ends (lib/jobs/jobs.ts runs it): settled, reported and recorded once,
 * whichever run gets there, or abandoned when no run could finish it. Kept apart from running
 * jobs so that the reconcile function, which abandons them, does not carry the renderer.
 */
import { settleReservation } from '#lib/accounts/quota.ts';
import type { Produced } from '#lib/api/document-requests.ts';
import { ApiError, errorBody } from '#lib/api/errors.ts';
import { pdfRecordView } from '#lib/api/views.ts';
import { counterStore, pdfStore } from '#lib/aws/stores.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { countRecordsOf, getPdfRecord } from '#lib/storage/pdfs.ts';
import { attemptDelivery, enqueueDelivery } from '#lib/webhooks/deliveries.ts';
import {
  deleteJobRequest,
  finishJob,
  getJob,
  jobPdfId,
  jobWebhookId,
  JOB_ASYNC_INVOKE,
  JOB_RESERVATION_LIFETIME_MS,
  pendingJobIds,
  type Job,
} from './job-records.ts';
import { webhookDeps } from './job-webhooks.ts';

/** How a run ended: what the job's `result` is, and how many reserved PDFs it did not store. */
export type Ending = Produced<unknown> & { readonly status: 'succeeded' | 'failed' };

/**
 * Records how a job ended: its quota settled (the PDFs not stored given back), its webhook queued,
 * then the job marked finished, its request removed, and the webhook's first try made at once.
 * Each step may be repeated by another run without effect.
 */
export async function endJob(job: Job, ending: Ending): Promise<void> {
  const store = pdfStore();
  await settleReservation(counterStore(), job.reservation, ending.failed);
  const completedAt = new Date();
  const delivery = job.webhookUrl
    ? await enqueueDelivery(webhookDeps().store, { id: jobWebhookId(job), keyId: job.keyId, jobId: job.id, url: job.webhookUrl, now: completedAt })
    : undefined;
  if (!(await finishJob(store, job, { status: ending.status, result: ending.result, completedAt }))) return;
  logger.info('job finished', { status: ending.status, failed: ending.failed });
  await deleteJobRequest(store, job.requestKey).catch((error: unknown) => logger.warn('job request not removed', errorFields(error)));
  if (delivery) await attemptDelivery(webhookDeps(), delivery).catch((error: unknown) => logger.error('webhook delivery failed', errorFields(error)));
}

/**
 * Ends a job no run could finish: it costs exactly the PDFs stored under its reservation (a
 * generate job that stored its PDF succeeded after all), and fails with `message` otherwise.
 */
export async function abandonJob(jobId: string, message: string, code: 'render_failed' | 'unauthorized' = 'render_failed'): Promise<void> {
  const job = await getJob(pdfStore(), jobId);
  // A bulk job is never run by the job function: lib/bulk ends it (completeExpiredBulkJobs, giveUpChunk).
  if (!job || job.kind === 'bulk' || job.status === 'succeeded' || job.status === 'failed') return;
  const made = job.kind === 'generate' ? await getPdfRecord(pdfStore(), jobPdfId(job, 'document')) : undefined;
  if (made) return endJob(job, { status: 'succeeded', result: pdfRecordView(made, job.baseUrl), failed: 0 });
  const created = Date.parse(job.createdAt);
  const stored = await countRecordsOf(pdfStore(), job.keyId, job.reservation.id, {
    from: new Date(created - 60_000),
    to: new Date(created + JOB_RESERVATION_LIFETIME_MS + 60_000),
  });
  logger.warn('job abandoned', { job_id: job.id, stored });
  const error = new ApiError(code, stored > 0 ? `${message} The ${stored} PDFs it stored are in your list and charged.` : message);
  await endJob(job, { status: 'failed', result: errorBody(error), failed: job.reservation.count - stored });
}

/**
 * What Lambda sends an asynchronous invocation's failure destination once it gives up on the
 * event: every try failed (`RetriesExhausted`) or it waited too long in Lambda's queue
 * (`EventAgeExceeded`). The job function's failure destination is a queue the reconcile function
 * reads (cdk/stack.ts); the local stack's Invoke endpoint hands the same record over directly.
 */
export interface GivenUpInvocation {
  readonly requestContext: { readonly condition: string; readonly approximateInvokeCount?: number };
  readonly requestPayload: unknown;
}

/**
 * Ends the job of an invocation Lambda gave up on, at once: no run of it will come any more. It is
 * charged for what it stored and fails with a message saying why; its webhook is sent. A job that
 * ended meanwhile (a last run finished after all) is left as it is.
 */
export async function endGivenUpJob(record: GivenUpInvocation): Promise<boolean> {
  const jobId = (record.requestPayload as { job_id?: unknown } | null)?.job_id;
  if (typeof jobId !== 'string') {
    logger.warn('given-up invocation names no job', { condition: record.requestContext.condition });
    return false;
  }
  const tries = record.requestContext.approximateInvokeCount;
  const message =
    record.requestContext.condition === 'EventAgeExceeded'
      ? 'The job could not be started in time: the service was overloaded. Nothing was charged for PDFs it did not store; please submit it again.'
      : `The job failed on each of its ${tries ?? JOB_ASYNC_INVOKE.retryAttempts + 1} tries (its renderer crashed or ran out of memory, or the service stayed too busy). Nothing was charged for PDFs it did not store; please submit it again.`;
  logger.warn('job given up', { job_id: jobId, condition: record.requestContext.condition });
  await abandonJob(jobId, message);
  return true;
}

/**
 * Abandons every unfinished generate or batch job whose reservation has expired: no run of it can
 * still be going. Bulk jobs are lib/bulk's to end (completeExpiredBulkJobs); the reconcile runs both.
 * Each job on its own: one job's error is logged and counted in `errors`, and the others are still
 * abandoned (the next run tries it again).
 */
export async function abandonExpiredJobs(now: Date): Promise<{ abandoned: number; errors: number }> {
  let abandoned = 0;
  let errors = 0;
  for (const id of await pendingJobIds(pdfStore())) {
    try {
      const job = await getJob(pdfStore(), id);
      if (!job || job.kind === 'bulk' || now.getTime() - Date.parse(job.createdAt) < JOB_RESERVATION_LIFETIME_MS) continue;
      await abandonJob(id, 'The job could not be completed. Nothing was charged for PDFs it did not store; please submit it again.');
      abandoned++;
    } catch (error) {
      errors++;
      logger.error('expired job not abandoned; the next run tries again', { job_id: id, ...errorFields(error) });
    }
  }
  return { abandoned, errors };
}
