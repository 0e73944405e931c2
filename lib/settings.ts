/**
 * Every tunable limit and every deployment setting, read from the environment in one place.
 *
 * Each setting has a documented default (docs/operating.md, "Configuration"). Values are read lazily so that
 * the local stack and the tests can set the environment before the first request.
 */

import { availableParallelism } from 'node:os';
import { resolveSecretArns } from './secrets.ts';

// In AWS the link-signing secret arrives as LINK_SIGNING_SECRET_ARN and is fetched here, once per
// cold start, so that the getter below stays synchronous (see lib/secrets.ts).
await resolveSecretArns(['LINK_SIGNING_SECRET']);

/** Cores this process may use: fixed for its life, and a system call to ask (settings are read per document). */
const CORES = availableParallelism();

function intFromEnv(name: string, fallback: number, { min = 1 }: { min?: number } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`Setting ${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Setting ${name} is required`);
  return value;
}

export const settings = {
  /** DynamoDB table holding keys, counters and PDF records. */
  get tableName(): string {
    return required('TABLE_NAME');
  },
  /** DynamoDB table of idempotency records (lib/api/idempotency.ts). */
  get idempotencyTableName(): string {
    return required('IDEMPOTENCY_TABLE_NAME');
  },
  /** S3 bucket holding the PDFs. */
  get bucketName(): string {
    return required('BUCKET_NAME');
  },
  /**
   * HMAC secret for download links; rotating it invalidates every outstanding link. In AWS it is
   * read from the Secrets Manager secret named by LINK_SIGNING_SECRET_ARN.
   */
  get linkSigningSecret(): string {
    return required('LINK_SIGNING_SECRET');
  },
  /**
   * The KMS key (its ARN) that seals the requests of asynchronous jobs at rest (lib/jobs/request-sealing.ts).
   * Set by the stack for the functions that submit and run jobs; without it, JOB_REQUEST_SECRET is used.
   */
  get jobRequestKeyArn(): string | undefined {
    return process.env.JOB_REQUEST_KEY_ARN || undefined;
  },
  /** Where there is no KMS (the local stack makes one per data directory): the secret job requests are sealed with. */
  get jobRequestSecret(): string {
    return required('JOB_REQUEST_SECRET');
  },
  /**
   * The RFC 3161 time-stamp authority signatures with `timestamp: true` get their token from
   * (lib/signatures/timestamps.ts): the only address the signer reaches. Empty: `timestamp: true` is refused (400).
   */
  get signatureTsaUrl(): string | undefined {
    return process.env.SIGNATURE_TSA_URL || undefined;
  },
  /** Longest the time-stamp authority may take to answer; past it the document fails TIMESTAMP_FAILED, uncharged. */
  get signatureTsaTimeoutMs(): number {
    return intFromEnv('SIGNATURE_TSA_TIMEOUT_MS', 5_000);
  },
  /**
   * The value of the `pdf-api:stack` tag on every KMS signing key this deployment creates: the CDK
   * stack allows kms:CreateKey only with it, and kms:Sign only on keys that carry it. "local" by default.
   */
  get signingKeyTag(): string {
    return process.env.SIGNING_KEY_TAG || 'local';
  },
  /** Base URL for download links when the API sits behind a custom domain; derived from the request otherwise. */
  get publicBaseUrl(): string | undefined {
    return process.env.PUBLIC_BASE_URL || undefined;
  },
  /** Longest a single document may take to load and print. */
  get renderTimeoutMs(): number {
    return intFromEnv('RENDER_TIMEOUT_MS', 20_000);
  },
  /**
   * Most resident memory one document's renderer may hold (lib/render/memory-budget.ts); past it the
   * renderer is killed and the document fails `memory_limit_exceeded` (422). On Lambda, the function's
   * memory less 640 MB for the browser's other processes, Node and the next workspace (1,408 MB at
   * 2,048 MB), so one document never takes the container down; elsewhere 1,536 MB.
   */
  get renderMemoryBudgetMb(): number {
    const lambdaMemoryMb = Number(process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
    return intFromEnv('RENDER_MEMORY_BUDGET_MB', lambdaMemoryMb > 0 ? Math.max(256, lambdaMemoryMb - 640) : 1_536);
  },
  /** Most pages one PDF may have; longer documents are refused (printing stops one page past it). */
  get maxPdfPages(): number {
    return intFromEnv('MAX_PDF_PAGES', 2_000);
  },
  /** Largest PDF stored: printing is cut off as soon as it is exceeded, and finishing and signing are checked against it too. */
  get maxPdfBytes(): number {
    return intFromEnv('MAX_PDF_BYTES', 100 * 1024 * 1024);
  },
  /** Most bytes one document may download (images, fonts, scripts...); past it its connections are cut. */
  get maxDocumentDownloadBytes(): number {
    return intFromEnv('MAX_DOCUMENT_DOWNLOAD_BYTES', 50 * 1024 * 1024);
  },
  /** Browser workspaces (context + page + guard) kept prepared ahead of the next documents, per kind (static, live). */
  get preparedWorkspaces(): number {
    return intFromEnv('PREPARED_WORKSPACES', 2, { min: 0 });
  },
  /**
   * Longest a document's subresources (images, style sheets, fonts, frames) are waited for; past it
   * the page stops loading and prints without what is still missing, so a stalled or endless
   * resource never costs the document its whole render time.
   */
  get resourceTimeoutMs(): number {
    return intFromEnv('RESOURCE_TIMEOUT_MS', 10_000);
  },
  /**
   * How long a document with scripts must stay quiet (no script running, no layout, no request in
   * flight) before it counts as done drawing and is printed.
   */
  get settleQuietMs(): number {
    return intFromEnv('SETTLE_QUIET_MS', 150);
  },
  /** Longest a document with scripts is waited for to go quiet; past it, it prints as it stands. */
  get settleMaxMs(): number {
    return intFromEnv('SETTLE_MAX_MS', 10_000, { min: 0 });
  },
  /** Largest accepted request body (decisions.md: 5 MB). */
  get maxBodyBytes(): number {
    return intFromEnv('MAX_BODY_BYTES', 5 * 1024 * 1024);
  },
  /** Lifetime of the presigned S3 URL a download link redirects to: long enough to start a download, no more. */
  get presignedUrlTtlSeconds(): number {
    return intFromEnv('PRESIGNED_URL_TTL_SECONDS', 60);
  },
  /** `host:port` entries the egress guard lets through although they resolve to non-public addresses. */
  get allowPrivateHosts(): ReadonlySet<string> {
    const raw = process.env.PDF_ALLOW_PRIVATE_HOSTS ?? '';
    return new Set(
      raw
        .split(',')
        .map((entry) => entry.trim().toLowerCase())
        .filter(Boolean),
    );
  },
  /** Name (or ARN) of the render function the batch function invokes once per item. */
  get renderFunctionName(): string {
    return required('RENDER_FUNCTION_NAME');
  },
  /**
   * Render invocations one batch keeps in flight. In AWS each runs in its own Lambda container, so
   * this can be the batch maximum; locally it is bounded by the machine (see renderConcurrency).
   */
  get batchConcurrency(): number {
    return intFromEnv('BATCH_CONCURRENCY', 100);
  },
  /** Longest one batch item may take, counted from its invocation: rendering plus storing. */
  get batchItemTimeoutMs(): number {
    return intFromEnv('BATCH_ITEM_TIMEOUT_MS', this.renderTimeoutMs + 5_000);
  },
  /** When a batch stops waiting for unfinished items, so it answers inside API Gateway's 29 s. */
  get batchDeadlineMs(): number {
    return intFromEnv('BATCH_DEADLINE_MS', 27_000);
  },
  /**
   * Documents this process renders at once (render slots, lib/render/capacity.ts): single requests
   * and, locally, batch items share them. A Lambda container serves one request at a time, so there
   * it is never reached; locally it is what the machine can print without every document slowing down.
   */
  get renderConcurrency(): number {
    return intFromEnv('RENDER_CONCURRENCY', Math.max(2, CORES * 2));
  },
  /**
   * Documents admitted and waiting for a render slot (singles waiting, batch items not yet started).
   * Past it a request is refused with 503 `service_busy` before anything is charged, unless its key
   * has less than its fair share of the queue. At least one full batch (100) fits in an idle process.
   */
  get maxQueuedRenders(): number {
    return intFromEnv('MAX_QUEUED_RENDERS', 100, { min: 0 });
  },
  /**
   * Longest a document waits for a render slot; past it, it is dropped (503, or a failed batch item)
   * with nothing charged. With the default render timeout it keeps waiting plus rendering inside API
   * Gateway's 29 s.
   */
  get maxQueueWaitMs(): number {
    return intFromEnv('MAX_QUEUE_WAIT_MS', 5_000);
  },

  /**
   * The account's concurrent Lambda executions, as the local stack enforces them (and the Lambda
   * emulation): every invocation counts, API requests included (lib/local/lambda-concurrency.ts).
   * 1000 is an established account's default; many new accounts get 10.
   */
  get lambdaAccountConcurrency(): number {
    return intFromEnv('LAMBDA_ACCOUNT_CONCURRENCY', 1_000);
  },

  /** URL of the bulk queue (lib/aws/bulk-queue.ts): one message per chunk of a bulk job's lines. */
  get bulkQueueUrl(): string {
    return required('BULK_QUEUE_URL');
  },
  /** Name (or ARN) of the job function that generate and batch invoke asynchronously for `async: true`. */
  get jobFunctionName(): string {
    return required('JOB_FUNCTION_NAME');
  },
  /**
   * Longest one document of an asynchronous job may take to load and print (a job has up to
   * Lambda's 15 minutes, not API Gateway's 29 s): 14 minutes by default, room to store and report.
   */
  get jobRenderTimeoutMs(): number {
    return intFromEnv('JOB_RENDER_TIMEOUT_MS', 14 * 60_000);
  },
  /**
   * Seconds between a failed webhook delivery and its next try; the delivery is given up after the
   * last. The default tries 8 times over about 27.6 hours (Standard Webhooks' suggested schedule).
   */
  get webhookRetryScheduleSeconds(): readonly number[] {
    const raw = process.env.WEBHOOK_RETRY_SCHEDULE;
    if (raw === undefined || raw === '') return [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];
    const delays = raw.split(',').map((part) => Number(part.trim()));
    if (delays.some((delay) => !Number.isInteger(delay) || delay < 1)) {
      throw new Error(`Setting WEBHOOK_RETRY_SCHEDULE must be whole seconds >= 1, comma-separated, got "${raw}"`);
    }
    return delays;
  },
  /** Longest a webhook receiver has to answer one delivery. */
  get webhookTimeoutMs(): number {
    return intFromEnv('WEBHOOK_TIMEOUT_MS', 10_000);
  },
  /**
   * How often a webhook sender reads the due list again for deliveries that came due: the local
   * stack's sender all along, the scheduled webhooks function (every minute, cdk/stack.ts) while it runs.
   */
  get webhookDispatchIntervalMs(): number {
    return intFromEnv('WEBHOOK_DISPATCH_INTERVAL_MS', 2_000);
  },
  /** Webhook tries under way at once in one sender, all API keys together. */
  get webhookConcurrency(): number {
    return intFromEnv('WEBHOOK_CONCURRENCY', 16);
  },
  /** Webhook tries of one API key under way at once in one sender: a key's slow receivers cannot take every slot. */
  get webhookConcurrencyPerKey(): number {
    return intFromEnv('WEBHOOK_CONCURRENCY_PER_KEY', 2);
  },

  /**
   * Whether this process is a Lambda function (Lambda sets AWS_LAMBDA_FUNCTION_NAME), rather than
   * the local stack or a test: there the caller is the operator, and errors may name settings.
   */
  get runsOnLambda(): boolean {
    return Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);
  },

  /** Another Chromium to use instead of the one @sparticuz/chromium ships (macOS, Debian's chromium). */
  get chromePath(): string | undefined {
    return process.env.CHROME_PATH || undefined;
  },
};
