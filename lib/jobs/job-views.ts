/**
 * How a job looks to its customer: the answer of `GET /v1/jobs/{job_id}` and the body of its
 * webhook, in the shape the OpenAPI document gives (lib/api/schemas.ts).
 */
import type { JobView } from '#lib/api/schemas.ts';
import type { WebhookEvent } from '#lib/webhooks/deliveries.ts';
import type { Job } from './job-records.ts';

/**
 * A job as `GET /v1/jobs/{job_id}` shows it and its webhook carries it (shared/spec/beyond.md). A
 * bulk job adds its counts: its final ones once ended, else `progress` (read from its shards).
 */
export function jobView(job: Job, progress?: { succeeded: number; failed: number }): JobView {
  const counts = job.bulk && (job.completedAt !== undefined ? { succeeded: job.succeeded ?? 0, failed: job.failed ?? 0 } : (progress ?? { succeeded: 0, failed: job.bulk.invalid }));
  return {
    job_id: job.id,
    status: job.status,
    created_at: job.createdAt,
    ...(job.completedAt !== undefined && { completed_at: job.completedAt }),
    ...(job.bulk && counts && { total: job.bulk.total, ...counts }),
    ...(job.result !== undefined && { result: job.result as JobView['result'] }),
  };
}

/** The webhook event reporting a finished job; undefined while it is not finished. */
export function jobEndedEvent(job: Job | undefined): WebhookEvent | undefined {
  if (!job?.completedAt || job.status === 'queued' || job.status === 'running') return undefined;
  // A cancelled bulk job completed too: what it stored is in its manifest (data.status says cancelled).
  return { type: job.status === 'failed' ? 'pdf.job.failed' : 'pdf.job.completed', timestamp: job.completedAt, data: jobView(job) };
}
