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

/** A job as `GET /v1/jobs/{job_id}` shows it and its webhook carries it (shared/spec/beyond.md). */
export function jobView(job: Job): JobView {
  return {
    job_id: job.id,
    status: job.status,
    created_at: job.createdAt,
    ...(job.completedAt !== undefined && { completed_at: job.completedAt }),
    ...(job.result !== undefined && { result: job.result as JobView['result'] }),
  };
}

/** The webhook event reporting a finished job; undefined while it is not finished. */
export function jobEndedEvent(job: Job | undefined): WebhookEvent | undefined {
  if (!job?.completedAt || (job.status !== 'succeeded' && job.status !== 'failed')) return undefined;
  return { type: job.status === 'succeeded' ? 'pdf.job.completed' : 'pdf.job.failed', timestamp: job.completedAt, data: jobView(job) };
}
