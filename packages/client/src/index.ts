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
  /** Reads the job every `intervalMs` (1 s) until it succeeded or failed, for at most `timeoutMs` (16 minutes). */
  waitForJob(id: string, options?: { intervalMs?: number; timeoutMs?: number }): Promise<Job>;
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
  return {
    raw,
    // One implementation for both overloads: the answer is whichever the request asked for.
    generate: (async (body: GenerateRequest, { idempotencyKey }: CreateOptions = {}) =>
      unwrap(await raw.POST('/v1/pdf/generate', { body, params: { header: { 'Idempotency-Key': idempotencyKey } } }))) as PdfApiClient['generate'],
    batch: (async (body: BatchRequest, { idempotencyKey }: CreateOptions = {}) =>
      unwrap(await raw.POST('/v1/pdf/batch', { body, params: { header: { 'Idempotency-Key': idempotencyKey } } }))) as PdfApiClient['batch'],
    job,
    waitForJob: async (id, { intervalMs = 1_000, timeoutMs = 16 * 60_000 } = {}) => {
      const giveUpAt = Date.now() + timeoutMs;
      for (;;) {
        const current = await job(id);
        if (current.status === 'succeeded' || current.status === 'failed') return current;
        if (Date.now() + intervalMs > giveUpAt) throw new PdfApiError(0, 'job_wait_timeout', `Job ${id} is still ${current.status} after ${timeoutMs} ms.`);
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
    },
    list: async (query = {}) => unwrap(await raw.GET('/v1/pdf', { params: { query } })),
    get: async (id) => unwrap(await raw.GET('/v1/pdf/{id}', { params: { path: { id } } })),
    delete: async (id) => {
      const answer = await raw.DELETE('/v1/pdf/{id}', { params: { path: { id } } });
      if (!answer.response.ok) throw errorFromAnswer(answer.response, answer.error);
    },
    usage: async () => unwrap(await raw.GET('/v1/usage')),
    health: async () => unwrap(await raw.GET('/health')),
    download: async (pdf) => {
      // The link needs no key (its signature is the credential) and redirects to storage.
      const response = await fetch(typeof pdf === 'string' ? pdf : pdf.url, { redirect: 'follow' });
      if (!response.ok) {
        const text = await response.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // Not the API's JSON (storage answered): the status and text say what happened.
        }
        throw errorFromAnswer(response, body);
      }
      return new Uint8Array(await response.arrayBuffer());
    },
  };
}
