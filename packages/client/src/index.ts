/**
 * The typed client of the PDF API: openapi-fetch over the types openapi-typescript generates from
 * the API's OpenAPI document (./schema.d.ts, written by `npm run generate:client` and checked for
 * drift by the test suite). Every method answers the documented success body or throws
 * `PdfApiError` carrying the API's own error code and message.
 *
 *   const api = createPdfApiClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.PDFAPI_KEY });
 *   const pdf = await api.generate({ html: '<h1>Invoice</h1>', format: 'Letter' });
 *   await writeFile('invoice.pdf', await api.download(pdf));
 */
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { bulk, manifestLines, upload, type BulkAccepted, type BulkOptions, type BulkPort, type BulkRequest, type ManifestLine, type Upload } from './bulk.ts';
import type { components, paths } from './schema.d.ts';

type Schemas = components['schemas'];
export type GenerateRequest = Schemas['GenerateRequest'];
export type DocumentOptions = Schemas['DocumentOptions'];
export type BatchRequest = Schemas['BatchRequest'];
export type BatchItem = Schemas['BatchItem'];
export type BatchResponse = Schemas['BatchResponse'];
export type BatchItemSuccess = Schemas['BatchItemSuccess'];
export type BatchItemFailure = Schemas['BatchItemFailure'];
export type PdfRecord = Schemas['PdfRecord'];
export type PdfList = Schemas['PdfList'];
export type Usage = Schemas['Usage'];
export type Health = Schemas['Health'];
export type JobAccepted = Schemas['JobAccepted'];
export type Job = Schemas['JobOutput'];
export type { components, paths };
export { jsonLines, MAX_INLINE_ITEMS } from './bulk.ts';
export type { BulkAccepted, BulkBody, BulkOptions, BulkRequest, BulkResult, ManifestLine, Upload } from './bulk.ts';

/** A bulk job as `GET /v1/jobs/{job_id}` shows it: a job with its line counts. */
export type BulkJob = Job & { total?: number; succeeded?: number; failed?: number };

/** A job's state as `waitForJob` reports it while waiting: a bulk job's counts so far (`total` lines, `succeeded`, `failed`). */
export interface JobProgress {
  readonly status: string;
  readonly total?: number;
  readonly succeeded?: number;
  readonly failed?: number;
  readonly job: Job;
}

export interface WaitOptions {
  /** First wait between reads (1 s); each wait is 1.5 times the last, up to `maxIntervalMs` (10 s). */
  readonly intervalMs?: number;
  readonly maxIntervalMs?: number;
  /** Longest wait in all: 16 minutes (an asynchronous job's limit) unless the job is a bulk job, which has none. */
  readonly timeoutMs?: number;
  /** Told the job's state after every read. */
  readonly onProgress?: (progress: JobProgress) => void;
  /** Stops waiting (the job goes on). */
  readonly signal?: AbortSignal;
}

export interface PdfApiClientOptions {
  /** Where the API is, e.g. `http://127.0.0.1:3000` or the API Gateway stage URL. */
  readonly baseUrl: string;
  /** `pdfk_…`; without it only the keyless routes (health, download links) answer. */
  readonly apiKey?: string;
  /** A fetch to use instead of the global one (tests, proxies, retries). */
  readonly fetch?: typeof globalThis.fetch;
}

/** An answer other than success: the API's error code and message, and any extra fields it gave. */
export class PdfApiError extends Error {
  override readonly name = 'PdfApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The API's error code (`quota_exceeded`, `rate_limit_exceeded`, …), or `http_<status>` for an answer that is not the API's. */
  readonly code: string;
  /** The error object's other fields, such as `retry_after` (seconds) or `max_batch_size`. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(status: number, code: string, message: string, details: Readonly<Record<string, unknown>> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The error an unsuccessful answer stands for: the documented `{ error: { code, message } }`, or the status. */
export function errorFromAnswer(response: Response, body: unknown): PdfApiError {
  // A 503 or 429 from in front of the API (API Gateway throttling) still says when to come back.
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  const extra = Number.isFinite(retryAfter) ? { retry_after: retryAfter } : {};
  if (isRecord(body) && isRecord(body.error) && typeof body.error.code === 'string') {
    const { code, message, ...rest } = body.error;
    return new PdfApiError(response.status, code, typeof message === 'string' ? message : code, { ...extra, ...rest });
  }
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
  return new PdfApiError(response.status, `http_${response.status}`, text || `${response.status} ${response.statusText}`.trim(), extra);
}

function unwrap<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.response.ok && answer.data !== undefined) return answer.data;
  throw errorFromAnswer(answer.response, answer.error);
}

/** Per-request settings of the operations that create PDFs. */
/**
 * A download link's answer, to read or stream: the link needs no key (its signature is the
 * credential) and redirects to storage. A refusal is thrown as the API's error.
 */
export async function fetchDownload(url: string, fetch: typeof globalThis.fetch = globalThis.fetch): Promise<Response> {
  const response = await fetch(url, { redirect: 'follow' });
  if (response.ok) return response;
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not the API's JSON (storage answered): the status and text say what happened.
  }
  throw errorFromAnswer(response, body);
}

export interface CreateOptions {
  /**
   * Makes the call safe to retry: the same key with the same request within 24 hours answers the
   * first response and charges nothing (`Idempotency-Key`). Use one key per logical request.
   */
  readonly idempotencyKey?: string;
}

export interface PdfApiClient {
  /** The openapi-fetch client itself, for anything the helpers below do not cover. */
  readonly raw: Client<paths>;
  generate(request: GenerateRequest & { async?: false }, options?: CreateOptions): Promise<PdfRecord>;
  /** `async: true`: a job, accepted; read it with `job` or wait for it with `waitForJob`. */
  generate(request: GenerateRequest & { async: true }, options?: CreateOptions): Promise<JobAccepted>;
  batch(request: BatchRequest & { async?: false }, options?: CreateOptions): Promise<BatchResponse>;
  batch(request: BatchRequest & { async: true }, options?: CreateOptions): Promise<JobAccepted>;
  /** An asynchronous job: its state, and its `result` once it ended. */
  job(id: string): Promise<Job>;
  /**
   * Reads the job until it ended (succeeded, failed, or cancelled and wound down), waiting longer
   * between reads as it goes (WaitOptions), and through the API's 429 and 503 answers.
   */
  waitForJob(id: string, options?: WaitOptions): Promise<Job>;
  /** Cancels a bulk job: no new lines start; what is stored stays, the rest of its quota goes back. */
  cancelJob(id: string): Promise<Job>;
  /** Uploads a JSON Lines file (a path, a Blob or bytes) for a bulk job: its upload id. */
  upload(file: string | Blob | Uint8Array): Promise<Upload>;
  /**
   * A bulk job: the items inline when few and small, else uploaded first as a JSON Lines file;
   * a `file` or an `upload_id` as given. Wait for it with `waitForJob`.
   */
  bulk(request: BulkRequest, options?: BulkOptions): Promise<BulkAccepted>;
  /** A finished bulk job's manifest, line by line as it downloads: each input line's PDF or error. */
  manifest(jobId: string): AsyncGenerator<ManifestLine>;
  /** A finished bulk job's manifest or archive (with `archive: true`) as a response whose body streams the file. */
  jobFile(jobId: string, file: 'manifest' | 'archive'): Promise<Response>;
  list(page?: { limit?: number; cursor?: string }): Promise<PdfList>;
  get(id: string): Promise<PdfRecord>;
  delete(id: string): Promise<void>;
  usage(): Promise<Usage>;
  health(): Promise<Health>;
  /** The PDF's bytes, through its download link (a record, or its `url`). */
  download(pdf: PdfRecord | string): Promise<Uint8Array>;
}

export function createPdfApiClient({ baseUrl, apiKey, fetch = globalThis.fetch }: PdfApiClientOptions): PdfApiClient {
  const raw = createClient<paths>({ baseUrl: baseUrl.replace(/\/+$/, ''), fetch: (request) => fetch(request) });
  if (apiKey) {
    const bearer: Middleware = {
      onRequest: ({ request }) => {
        request.headers.set('Authorization', `Bearer ${apiKey}`);
        return request;
      },
    };
    raw.use(bearer);
  }

  const job = async (id: string) => unwrap(await raw.GET('/v1/jobs/{job_id}', { params: { path: { job_id: id } } }));
  const bulkPort: BulkPort = {
    createUpload: async () => unwrap(await raw.POST('/v1/uploads')),
    putFile: async (url, body) => {
      const put = await fetch(url, { method: 'PUT', body });
      if (!put.ok) throw errorFromAnswer(put, await put.text().catch(() => ''));
    },
    submit: async (body) => unwrap(await raw.POST('/v1/pdf/bulk', { body })),
    // The API answers a redirect to storage; fetch drops the key on the way to another origin.
    jobFile: async (jobId, file) => {
      const path = file === 'manifest' ? '/v1/jobs/{job_id}/manifest' : '/v1/jobs/{job_id}/archive';
      const answer = await raw.GET(path, { params: { path: { job_id: jobId } }, parseAs: 'stream' });
      if (!answer.response.ok) throw errorFromAnswer(answer.response, answer.error);
      return answer.response;
    },
  };
  const ended = (current: Job) => {
    const status = current.status as string;
    return status === 'succeeded' || status === 'failed' || (status === 'cancelled' && current.completed_at !== undefined);
  };
  return {
    raw,
    // One implementation for both overloads: the answer is whichever the request asked for.
    generate: (async (body: GenerateRequest, { idempotencyKey }: CreateOptions = {}) =>
      unwrap(await raw.POST('/v1/pdf/generate', { body, params: { header: { 'Idempotency-Key': idempotencyKey } } }))) as PdfApiClient['generate'],
    batch: (async (body: BatchRequest, { idempotencyKey }: CreateOptions = {}) =>
      unwrap(await raw.POST('/v1/pdf/batch', { body, params: { header: { 'Idempotency-Key': idempotencyKey } } }))) as PdfApiClient['batch'],
    job,
    waitForJob: async (id, { intervalMs = 1_000, maxIntervalMs = 10_000, timeoutMs, onProgress, signal } = {}) => {
      const started = Date.now();
      const sleep = (ms: number) =>
        new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason);
          const timer = setTimeout(() => (signal?.removeEventListener('abort', stop), resolve()), ms);
          const stop = () => (clearTimeout(timer), reject(signal!.reason));
          signal?.addEventListener('abort', stop, { once: true });
        });
      for (let wait = intervalMs; ; wait = Math.min(wait * 1.5, maxIntervalMs)) {
        let current: Job;
        try {
          current = await job(id);
        } catch (error) {
          // Busy or rate-limited: the job goes on; read it again when the API says.
          const busy = error instanceof PdfApiError && (error.status === 429 || error.status === 503);
          if (!busy) throw error;
          const after = Number(error.details.retry_after);
          await sleep(Number.isFinite(after) ? after * 1000 : wait);
          continue;
        }
        const counts = current as BulkJob;
        onProgress?.({ status: current.status, total: counts.total, succeeded: counts.succeeded, failed: counts.failed, job: current });
        if (ended(current)) return current;
        // A bulk job (it has a total) may run for hours; any other job ends within 15 minutes.
        const limit = timeoutMs ?? (counts.total !== undefined ? Number.POSITIVE_INFINITY : 16 * 60_000);
        if (Date.now() + wait - started > limit) throw new PdfApiError(0, 'job_wait_timeout', `Job ${id} is still ${current.status} after ${limit} ms.`);
        await sleep(wait);
      }
    },
    cancelJob: async (id) => unwrap(await raw.DELETE('/v1/jobs/{job_id}', { params: { path: { job_id: id } } })),
    upload: (file) => upload(bulkPort, file),
    bulk: (request, options) => bulk(bulkPort, request, options),
    manifest: (jobId) => manifestLines(bulkPort, jobId),
    jobFile: (jobId, file) => bulkPort.jobFile(jobId, file),
    list: async (query = {}) => unwrap(await raw.GET('/v1/pdf', { params: { query } })),
    get: async (id) => unwrap(await raw.GET('/v1/pdf/{id}', { params: { path: { id } } })),
    delete: async (id) => {
      const answer = await raw.DELETE('/v1/pdf/{id}', { params: { path: { id } } });
      if (!answer.response.ok) throw errorFromAnswer(answer.response, answer.error);
    },
    usage: async () => unwrap(await raw.GET('/v1/usage')),
    health: async () => unwrap(await raw.GET('/health')),
    download: async (pdf) => {
      const response = await fetchDownload(typeof pdf === 'string' ? pdf : pdf.url, fetch);
      return new Uint8Array(await response.arrayBuffer());
    },
  };
}
