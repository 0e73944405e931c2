/**
 * A bulk job as requested (`POST /v1/pdf/bulk`, shared/spec/beyond.md "Bulk jobs") and the limits of
 * its input: what the bulk function validates the body with, what the OpenAPI document describes
 * (lib/api/openapi.ts), and what the upload reader (lib/bulk/upload-lines.ts) holds every line to.
 * Each line or item is a batch item, checked on its own (lib/documents/batch.ts `checkItemShape`,
 * then its options as every document's), so the body's `items` are `unknown` here.
 */
import { z } from 'zod';

/**
 * Most items sent inline (`items`); larger jobs upload their lines (`POST /v1/uploads`). Inline items
 * also count against the request body's limit (settings.maxBodyBytes, 5 MB).
 */
export const MAX_INLINE_ITEMS = 1_000;
/**
 * Most bytes one line may hold: what one request body may (settings.maxBodyBytes, decisions.md's
 * 5 MB), so any document generate or batch takes can be a line of a bulk job, and a worker holds
 * one line of a job at a time.
 */
export const MAX_LINE_BYTES = 5 * 1024 * 1024;
/**
 * Most lines in one bulk job: 1,000,000, the largest runs this is for (a month's statements of a
 * large customer base); the 100,000-invoice run is a tenth of it. Every line is checked at
 * submission, inside the API's 29-second answer: the upload reader checks about 125,000 short lines
 * (a url or template item of ~100 bytes) or 33,000 html lines of 2 KB a second on one core of the
 * development machine (measured with generated 100,000-line uploads of each kind), so a full upload
 * of either kind is checked in under 10 seconds.
 */
export const MAX_BULK_ITEMS = 1_000_000;
/**
 * Most bytes in one upload: 256 MiB, which is 1,000,000 lines of ~250 bytes (template items with
 * their data) or 100,000 html invoices of 2.5 KB; checked at ~57 MB/s, under 5 seconds, plus the
 * time to read it from S3. A run of larger documents splits into several jobs, or gives `url` or
 * template items.
 */
export const MAX_UPLOAD_BYTES = 256 * 1024 * 1024;
/**
 * Most lines of a job that asks for `archive: true`. The archive is written by one bulk worker
 * invocation (15 minutes) after the last chunk, streaming every PDF from S3 into one multipart
 * object: 100,000 invoices of ~30 KB are 3 GB, minutes at Lambda's network speed, with room for
 * larger PDFs; ten times that would not fit reliably (docs/bulk-jobs.md). A larger job reads its
 * PDFs through its manifest's links.
 */
export const MAX_ARCHIVE_LINES = 100_000;

/** The body of POST /v1/pdf/bulk. */
export const bulkBodySchema = z.strictObject({
  upload_id: z.string({ error: 'upload_id must be a string' }).optional(),
  items: z.array(z.unknown(), { error: 'items must be an array of batch items' }).optional(),
  options: z.record(z.string(), z.unknown(), { error: 'options must be an object' }).optional(),
  webhook_url: z.string({ error: 'webhook_url must be a string' }).max(2048, { error: 'webhook_url must be at most 2048 characters' }).optional(),
  archive: z.boolean({ error: 'archive must be true or false' }).optional(),
  skip_invalid: z.boolean({ error: 'skip_invalid must be true or false' }).optional(),
});
export type BulkBody = z.infer<typeof bulkBodySchema>;
