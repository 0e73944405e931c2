/**
 * How stored things look in API responses (spec 2.1).
 */
import { settings } from '#lib/settings.ts';
import { signDownloadLink } from '#lib/storage/links.ts';
import { downloadName, type PdfRecord } from '#lib/storage/pdfs.ts';
import type { Job } from '#lib/jobs/job-records.ts';
import type { WebhookEvent } from '#lib/webhooks/deliveries.ts';
import type { JobView, PdfRecordView } from './schemas.ts';

export function downloadUrl(record: PdfRecord, baseUrl: string): string {
  return signDownloadLink({
    baseUrl,
    pdfId: record.id,
    expiresAt: new Date(record.expiresAt),
    secret: settings.linkSigningSecret,
  });
}

/** A PDF record as every endpoint shows it: the shape the OpenAPI document gives (lib/api/schemas.ts). */
export function pdfRecordView(record: PdfRecord, baseUrl: string): PdfRecordView {
  return {
    id: record.id,
    url: downloadUrl(record, baseUrl),
    size: record.size,
    pages: record.pages,
    format: record.format,
    filename: downloadName(record),
    generation_time_ms: record.generationTimeMs,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
  };
}

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
