/**
 * What the API answers with, as zod schemas: the views (lib/api/views.ts) are typed by them and the
 * OpenAPI document (lib/api/openapi.ts) is generated from them, so the documented response and the
 * real one are the same fact. The integration tests validate live responses against the document.
 */
import { z } from 'zod';
import { TIER_NAMES } from '#lib/accounts/tiers.ts';
import { BATCH_ITEM_ERRORS, MERGE_ERRORS, type BatchItemCode } from '#lib/documents/batch.ts';

const pdfId = z.string().regex(/^pdf_[0-9A-Za-z]{20,}$/).meta({ description: 'The PDF’s id: `pdf_` and at least 20 random base62 characters.', example: 'pdf_7fKq2LmN9xRt4VwY1bZc3DeF' });
const timestamp = z.iso.datetime();

export const pdfRecordSchema = z
  .object({
    id: pdfId,
    url: z.url().meta({ description: 'The download link: valid until `expires_at`, it redirects to the file for a minute at a time.' }),
    size: z.int().min(1).meta({ description: 'File size in bytes.' }),
    pages: z.int().min(1).meta({ description: 'Number of pages.' }),
    format: z.string().meta({
      description: 'The page format used: A4, A3, A5, Letter, Legal or Tabloid; `custom` for `width` and `height`; `mixed` for a merged file of several.',
      example: 'A4',
    }),
    filename: z.string().meta({ description: 'The name it downloads under (`filename`, or `<id>.pdf`).', example: 'invoice-2026-001.pdf' }),
    generation_time_ms: z.int().min(0).meta({ description: 'Time spent producing it, in milliseconds.' }),
    created_at: timestamp.meta({ description: 'Creation time, ISO 8601 UTC.' }),
    expires_at: timestamp.meta({ description: 'When the link and the file expire: 7 to 365 days after creation, by tier.' }),
    template_id: z.string().optional().meta({ description: 'The stored template it was rendered from (absent for html and url documents).', example: 'tpl_9sLq2VbN4xRt7WmY1cZd3EfG' }),
    template_version: z.int().min(1).optional().meta({ description: 'The version of that template it was rendered from.', example: 3 }),
    signed: z.literal(true).optional().meta({ description: 'Present when the PDF carries a PAdES signature (the `signature` option).' }),
    signing_key_id: z.string().optional().meta({ description: 'The signing key it was signed with.', example: 'sk_4hTq8LmN2xRt6VwY9bZc1DeF' }),
    content_type: z.literal('application/pdf').meta({ description: 'The file’s media type: always `application/pdf` for a PDF (a listing holds pictures too, each with its own).' }),
    thumbnail_url: z.url().optional().meta({ description: 'With `thumbnail`: the link to a picture of the first page, drawn from the PDF, valid as long as `url`.' }),
  })
  .meta({ id: 'PdfRecord', description: 'A stored PDF (spec 2.1).' });
export type PdfRecordView = z.infer<typeof pdfRecordSchema>;

const imageId = z.string().regex(/^img_[0-9A-Za-z]{20,}$/).meta({ description: 'The picture’s id: `img_` and at least 20 random base62 characters.', example: 'img_3hQv8LmN2xRt4WwY7bZc1DeK' });

export const imageRecordSchema = z
  .object({
    id: imageId,
    url: z.url().meta({ description: 'The download link: valid until `expires_at`, it redirects to the file for a minute at a time.' }),
    content_type: z.enum(['image/png', 'image/jpeg', 'image/webp']).meta({ description: 'The picture’s media type, from `image.format`.' }),
    width: z.int().min(1).meta({ description: 'Width in pixels (the viewport or clip times `device_scale_factor`).' }),
    height: z.int().min(1).meta({ description: 'Height in pixels.' }),
    size: z.int().min(1).meta({ description: 'File size in bytes.' }),
    filename: z.string().meta({ description: 'The name it downloads under (`filename`, or `<id>.png`, `.jpg`, `.webp`).', example: 'social-card.png' }),
    generation_time_ms: z.int().min(0).meta({ description: 'Time spent producing it, in milliseconds.' }),
    created_at: timestamp.meta({ description: 'Creation time, ISO 8601 UTC.' }),
    expires_at: timestamp.meta({ description: 'When the link and the file expire: 7 to 365 days after creation, by tier.' }),
    template_id: z.string().optional().meta({ description: 'The stored template it was rendered from.' }),
    template_version: z.int().min(1).optional().meta({ description: 'The version of that template it was rendered from.' }),
  })
  .meta({ id: 'ImageRecord', description: 'A stored picture (`POST /v1/image/generate`): listed, linked, charged and deleted as a PDF is.' });
export type ImageRecordView = z.infer<typeof imageRecordSchema>;

/** Any stored record: a PDF or a picture, told apart by `content_type`. */
export const storedRecordSchema = z.union([pdfRecordSchema, imageRecordSchema]).meta({ id: 'StoredRecord' });

const batchItemSuccessSchema = z
  .object({
    success: z.literal(true),
    pdf_id: z.string().regex(/^(pdf|img)_[0-9A-Za-z]{20,}$/).meta({ description: 'The item’s PDF id (`pdf_…`), or its picture’s (`img_…`) for an item with `"output": "image"`.', example: 'pdf_7fKq2LmN9xRt4VwY1bZc3DeF' }),
    download_url: z.url().meta({ description: 'The download link, as `url` in a PDF record.' }),
    pages: z.int().min(1),
    size_bytes: z.int().min(1),
    metadata: z.record(z.string(), z.unknown()).meta({ description: 'The item’s `metadata`, exactly as sent (`{}` when none).' }),
    content_type: z
      .enum(['application/pdf', 'image/png', 'image/jpeg', 'image/webp'])
      .meta({ description: 'What the item made: `application/pdf`, or the picture’s media type for an item with `"output": "image"`.' }),
  })
  .meta({ id: 'BatchItemSuccess' });

const itemErrorCodes = Object.keys(BATCH_ITEM_ERRORS) as [BatchItemCode, ...BatchItemCode[]];
const batchItemFailureSchema = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(itemErrorCodes).meta({
        description: Object.entries(BATCH_ITEM_ERRORS).map(([code, meaning]) => `- \`${code}\`: ${meaning}`).join('\n'),
      }),
      message: z.string().meta({ description: 'What went wrong, in words meant for the caller.' }),
    }),
  })
  .meta({ id: 'BatchItemFailure', description: 'An item that produced no PDF; it is not charged.' });

const mergeCodes = Object.keys(MERGE_ERRORS) as [keyof typeof MERGE_ERRORS, ...(keyof typeof MERGE_ERRORS)[]];

export const batchResponseSchema = z
  .object({
    success: z.literal(true).meta({ description: 'The batch was processed; each item says whether it succeeded.' }),
    results: z.array(z.union([batchItemSuccessSchema, batchItemFailureSchema])).meta({ description: 'One result per item, in input order.' }),
    total: z.int().min(1),
    successful: z.int().min(0),
    failed: z.int().min(0),
    merged: pdfRecordSchema.nullable().optional().meta({
      description: 'With `merge: true`: the successful items joined in input order into one more PDF (not charged); null when none succeeded or joining failed.',
    }),
    merge_error: z
      .object({
        code: z.enum(mergeCodes).meta({ description: Object.entries(MERGE_ERRORS).map(([code, meaning]) => `- \`${code}\`: ${meaning}`).join('\n') }),
        message: z.string(),
      })
      .optional()
      .meta({ description: 'Why `merged` is null although items succeeded.' }),
    processing_time_ms: z.int().min(0),
  })
  .meta({ id: 'BatchResponse', description: 'The batch envelope (spec 2.4): total = successful + failed.' });

export const usageSchema = z
  .object({
    tier: z.enum(TIER_NAMES),
    rate_limit_per_minute: z.int().min(1).meta({ description: 'Requests per minute for this key, all endpoints together (a batch is one request).' }),
    monthly_quota: z.int().min(0).meta({ description: 'PDFs per calendar month (UTC).' }),
    quota_used: z.int().min(0),
    quota_remaining: z.int().min(0),
    quota_reset_at: timestamp.meta({ description: '00:00:00Z on the first day of next month.' }),
    max_batch_size: z.int().min(1),
    link_validity_days: z.int().min(1).meta({ description: 'How long download links of new PDFs stay valid.' }),
  })
  .meta({ id: 'Usage', description: 'The calling key’s limits and this month’s consumption.' });

export const pdfListSchema = z
  .object({
    data: z.array(storedRecordSchema).meta({ description: 'The key’s PDFs and pictures that can still be downloaded, newest first, each with its `content_type`.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  })
  .meta({ id: 'PdfList' });

const checkStatus = z.enum(['ok', 'down', 'not_checked']);
export const healthSchema = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.object({ browser: checkStatus, table: checkStatus, bucket: checkStatus }),
    rendering: z
      .object({
        status: z.enum(['available', 'saturated']),
        slots: z.int().meta({ description: 'Documents rendered at once.' }),
        running: z.int().meta({ description: 'Documents rendering now.' }),
        waiting: z.int().meta({ description: 'Documents waiting for their turn.' }),
      })
      .optional()
      .meta({
        description:
          'Where one process renders for everyone (the local stack): `saturated` when every slot is taken and documents wait. New documents then wait their key’s turn or get 503 `service_busy`; the service is still up. Absent in AWS, where Lambda adds instances.',
      }),
    event_loop: z
      .object({
        delay_p99_ms: z.int().meta({ description: '99th percentile of the event loop’s delay, in ms.' }),
        delay_max_ms: z.int().meta({ description: 'Longest delay of the event loop, in ms.' }),
      })
      .meta({
        description:
          'How long the answering process’s event loop was held lately (the last 10 s window and the current one): every request that process serves waits that long. Customer code (templates, data schemas) runs in worker threads, so it stays small.',
      }),
  })
  .meta({ id: 'Health' });

const jobId = z.string().regex(/^job_[0-9A-Za-z]{20,}$/).meta({ description: 'The job’s id: `job_` and at least 20 random base62 characters.', example: 'job_4hTz8QmW2pLx6NvR0cYb5KsJ' });
const jobStatus = z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']).meta({
  description:
    '`queued` until a worker takes it, `running`, then `succeeded` or `failed` (a failed job costs nothing); a bulk job cancelled with `DELETE /v1/jobs/{job_id}` is `cancelled` at once (its `completed_at` and `result` come once the lines under way have ended).',
});

export const jobAcceptedSchema = z
  .object({
    job_id: jobId,
    status: jobStatus.meta({ description: '`queued` when accepted; a replay (the same `Idempotency-Key` and request) answers the job’s status now.' }),
    status_url: z.url().meta({ description: 'Where to read the job: `GET /v1/jobs/{job_id}` (also in `Location`).' }),
  })
  .meta({ id: 'JobAccepted', description: 'An asynchronous job was accepted; its quota is reserved and charged only for the PDFs it stores.' });
export type JobAcceptedView = z.infer<typeof jobAcceptedSchema>;

/** A finished bulk job's result (shared/spec/beyond.md "Bulk jobs"). */
export const bulkResultSchema = z
  .object({
    manifest_url: z.url().meta({
      description:
        'The manifest, JSON Lines: one line per input line, in order, `{ line, ...batch item result }`: its PDF or picture (`success: true`, `pdf_id`, `download_url`, `pages`, `size_bytes`, `metadata`, and `content_type`: `application/pdf`, or `image/png`, `image/jpeg` or `image/webp` for a picture, `"output": "image"`) or its error (`success: false`, `error: { code, message }`, a batch item error code, or `CANCELLED` for a line a cancelled job never started). Read with the API key: `GET` answers a redirect to the file.',
    }),
    archive_url: z.url().optional().meta({
      description: 'With `archive: true`: one ZIP of every stored PDF, each named by its `filename` or its line number (`000042.pdf`). Read with the API key: `GET` answers a redirect to the file.',
    }),
    archive_error: z
      .object({ code: z.enum(['ARCHIVE_FAILED']), message: z.string() })
      .optional()
      .meta({ description: 'With `archive: true`, when the archive could not be written (its PDFs are still listed in the manifest, each downloadable by its link).' }),
    succeeded: z.int().min(0).meta({ description: 'Lines whose PDF is stored, and charged.' }),
    failed: z.int().min(0).meta({ description: 'Lines without a PDF (invalid, failed or cancelled), not charged.' }),
  })
  .meta({ id: 'BulkResult' });

/** `POST /v1/uploads`: where to PUT a bulk job's input. */
export const uploadSchema = z
  .object({
    upload_id: z.string().regex(/^upl_[0-9A-Za-z]{20,}$/).meta({ description: 'Name it as `upload_id` in `POST /v1/pdf/bulk` once the file is uploaded.', example: 'upl_7GkQ2mX9pLw4ZtR1vN8cY3bH' }),
    url: z.url().meta({ description: 'PUT the JSON Lines file here (one batch item per line), with no API key: the URL is the credential.' }),
    expires_at: timestamp.meta({ description: 'Until when the URL takes the upload.' }),
  })
  .meta({ id: 'Upload', description: 'A presigned upload for a bulk job’s JSON Lines input. The upload is the key’s own: only its key can name it in a job.' });
export type UploadView = z.infer<typeof uploadSchema>;

/** `POST /v1/pdf/bulk`'s answer. */
export const bulkAcceptedSchema = z
  .object({
    job_id: jobId,
    status: z.literal('queued'),
    status_url: z.url().meta({ description: 'Where to read the job and its progress: `GET /v1/jobs/{job_id}` (also in `Location`).' }),
    total: z.int().min(1).meta({ description: 'The input’s lines, valid or not: the manifest will have one line for each.' }),
  })
  .meta({ id: 'BulkAccepted', description: 'A bulk job was accepted: its lines were checked and the quota of the valid ones reserved; it is charged only for the PDFs it stores.' });

export const jobSchema = z
  .object({
    job_id: jobId,
    status: jobStatus,
    created_at: timestamp,
    completed_at: timestamp.optional().meta({ description: 'When it succeeded or failed.' }),
    total: z.int().min(0).optional().meta({ description: 'A bulk job: its input lines, valid or not.' }),
    succeeded: z.int().min(0).optional().meta({ description: 'A bulk job: lines whose PDF is stored (and charged), so far.' }),
    failed: z.int().min(0).optional().meta({ description: 'A bulk job: lines that failed so far, the invalid ones skipped at submission first.' }),
    result: z
      .union([
        pdfRecordSchema,
        imageRecordSchema,
        batchResponseSchema,
        bulkResultSchema,
        z.object({ error: z.record(z.string(), z.unknown()) }).meta({ id: 'JobError' }),
      ])
      .optional()
      .meta({
        description:
          'Once finished: exactly the body the synchronous call would have answered: a PdfRecord (generate), a BatchResponse (batch), or `{ error: { code, message } }` when it failed; a bulk job’s BulkResult.',
      }),
  })
  .meta({ id: 'Job', description: 'An asynchronous generate, batch or bulk job (shared/spec/beyond.md, "Asynchronous jobs", "Bulk jobs").' });
export type JobView = z.infer<typeof jobSchema>;

export const webhookEventSchema = z
  .object({
    type: z.enum(['pdf.job.completed', 'pdf.job.failed']),
    timestamp: timestamp.meta({ description: 'When the event happened.' }),
    data: jobSchema,
  })
  .meta({
    id: 'WebhookEvent',
    description:
      'POSTed to `webhook_url` when a job ends (`pdf.job.completed`, also for a bulk job that ended cancelled, whose `data.status` says `cancelled`; `pdf.job.failed` for a failed job), signed per Standard Webhooks with the key’s `whsec_` secret: headers `webhook-id` (the same on every retry), `webhook-timestamp` and `webhook-signature` (`v1,<base64 HMAC-SHA256 of id.timestamp.body>`). Retried with backoff for about 27 hours until the receiver answers 2xx.',
  });

const templateId = z.string().regex(/^tpl_[0-9A-Za-z]{20,}$/).meta({ description: 'The template’s id: `tpl_` and at least 20 random base62 characters.', example: 'tpl_9sLq2VbN4xRt7WmY1cZd3EfG' });

export const templateSummarySchema = z
  .object({
    template_id: templateId,
    name: z.string().meta({ description: 'The latest version’s name.', example: 'Invoice' }),
    version: z.int().min(1).meta({ description: 'The latest version: what a render without `template_version` uses.', example: 3 }),
    created_at: timestamp.meta({ description: 'When the template was created (version 1).' }),
    updated_at: timestamp.meta({ description: 'When its latest version was saved.' }),
  })
  .meta({ id: 'TemplateSummary', description: 'A stored template, as listed.' });

export const templateSchema = z
  .object({
    template_id: templateId,
    name: z.string().meta({ description: 'This version’s name.', example: 'Invoice' }),
    version: z.int().min(1).meta({ description: 'The version shown: the latest unless `?version=N` asked for another.', example: 3 }),
    latest_version: z.int().min(1).meta({ description: 'The template’s latest version.', example: 3 }),
    created_at: timestamp.meta({ description: 'When the template was created (version 1).' }),
    updated_at: timestamp.meta({ description: 'When this version was saved.' }),
    html: z.string().meta({ description: 'The Liquid template of the document’s HTML.' }),
    header_html: z.string().optional().meta({ description: 'The Liquid template of the page header.' }),
    footer_html: z.string().optional().meta({ description: 'The Liquid template of the page footer.' }),
    options: z.record(z.string(), z.unknown()).optional().meta({ description: 'Default document options (DocumentOptions), as saved; a request’s own options win, option by option.' }),
    data_schema: z.unknown().optional().meta({ description: 'The JSON Schema that `data` is checked against, as saved.' }),
    sample_data: z.record(z.string(), z.unknown()).optional().meta({ description: 'Data for previews (used when a preview sends none), as saved.' }),
  })
  .meta({ id: 'Template', description: 'One version of a stored template: versions never change once saved.' });
export type TemplateView = z.infer<typeof templateSchema>;
export type TemplateSummaryView = z.infer<typeof templateSummarySchema>;

export const templateListSchema = z
  .object({
    data: z.array(templateSummarySchema).meta({ description: 'The key’s templates, newest first (deleted ones are absent).' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  })
  .meta({ id: 'TemplateList' });

/* Signing keys (shared/spec/beyond.md "Signatures"). */
export const signingKeySchema = z
  .object({
    signing_key_id: z.string().regex(/^sk_[0-9A-Za-z]{20,}$/).meta({ description: 'The signing key’s id: `sk_` and at least 20 random base62 characters.', example: 'sk_4hTq8LmN2xRt6VwY9bZc1DeF' }),
    key_spec: z.enum(['ECC_NIST_P256', 'RSA_3072']).meta({ description: 'The KMS key’s kind: ECDSA on P-256, or RSA 3072 (PKCS#1 v1.5).' }),
    status: z.enum(['pending_certificate', 'active']).meta({ description: '`pending_certificate` until a chain is uploaded; `active` signs.' }),
    subject: z
      .object({ common_name: z.string(), organization: z.string().optional(), country: z.string().optional(), email: z.string().optional() })
      .meta({ description: 'The subject its CSR names.' }),
    csr_pem: z.string().meta({ description: 'The PKCS#10 certificate request, signed by the key in KMS: have it issued by your CA.' }),
    certificate_pem: z.string().optional().meta({ description: 'The leaf certificate, once uploaded (or made, `self_signed`).' }),
    certificate_chain_pem: z.string().optional().meta({ description: 'The whole chain, leaf first, as uploaded.' }),
    not_after: timestamp.optional().meta({ description: 'Until when the chain is valid (its earliest expiry): signing after it is 409 `signing_key_not_ready`.' }),
    created_at: timestamp,
  })
  .meta({ id: 'SigningKey', description: 'A signing key: a KMS key only this API key signs with; its private key never leaves KMS.' });
export type SigningKeyView = z.infer<typeof signingKeySchema>;

export const signingKeyListSchema = z
  .object({
    data: z.array(signingKeySchema).meta({ description: 'The key’s signing keys, newest first (deleted ones are absent).' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last.' }),
  })
  .meta({ id: 'SigningKeyList' });
