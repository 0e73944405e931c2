/**
 * The production wiring of the domain modules' ports: the shared clients plus the configured table
 * and bucket. Handlers use these; tests may build their own.
 */
import type { KeyStore } from '#lib/accounts/keys.ts';
import type { CounterStore } from '#lib/accounts/rate-limit.ts';
import type { PdfStore } from '#lib/storage/pdfs.ts';
import { jobEndedEvent } from '#lib/api/views.ts';
import { readJob } from '#lib/jobs/job-records.ts';
import type { WebhookDeps } from '#lib/webhooks/deliveries.ts';
import { settings } from '#lib/settings.ts';
import { dynamo, s3 } from './clients.ts';

export const keyStore = (): KeyStore => ({ client: dynamo(), tableName: settings.tableName });

export const pdfStore = (): PdfStore => ({
  dynamo: dynamo(),
  s3: s3(),
  tableName: settings.tableName,
  bucketName: settings.bucketName,
});

export const counterStore = (): CounterStore => ({ client: dynamo(), tableName: settings.tableName });

/** What sending webhooks needs: the table (deliveries, and the keys' signing secrets), the jobs they report, and the settings. */
export const webhookDeps = (): WebhookDeps => ({
  store: { client: dynamo(), tableName: settings.tableName },
  egress: { allowPrivateHosts: settings.allowPrivateHosts },
  timeoutMs: settings.webhookTimeoutMs,
  retryScheduleSeconds: settings.webhookRetryScheduleSeconds,
  eventOf: async (delivery) => jobEndedEvent(await readJob(pdfStore(), delivery.jobId)),
});
