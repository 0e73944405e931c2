/**
 * The typed client of the PDF API: a method per endpoint, typed by the types openapi-typescript
 * generates from the API's OpenAPI document (./schema.d.ts, written by `npm run generate:client`
 * and checked for drift by the test suite), over `fetch` alone (./transport.ts: retries, idempotency
 * keys, timeouts). Every method answers the documented success body or throws a `PdfApiError`
 * carrying the API's own status, code, message, details and request id.
 *
 *   const api = createPdfApiClient({ baseUrl: 'https://api.example.com', apiKey: process.env.PDFAPI_KEY });
 *   const pdf = await api.generate({ html: '<h1>Invoice</h1>', format: 'Letter' });
 *   await writeFile('invoice.pdf', await api.download(pdf));
 */
import { bulk, manifestLines, upload, type BulkAccepted, type BulkOptions, type BulkPort, type BulkRequest, type ManifestLine, type Upload } from './bulk.ts';
import { errorFromResponse, PdfApiError } from './errors.ts';
import type { components, paths } from './schema.d.ts';
import { sleep, Transport, type RequestOptions, type RetryOptions } from './transport.ts';

type Schemas = components['schemas'];
export type GenerateRequest = Schemas['GenerateRequest'];
export type DocumentOptions = Schemas['DocumentOptions'];
export type BatchRequest = Schemas['BatchRequest'];
export type BatchItem = Schemas['BatchItem'];
export type BatchResponse = Schemas['BatchResponseOutput'];
export type BatchItemSuccess = Schemas['BatchItemSuccessOutput'];
export type BatchItemFailure = Schemas['BatchItemFailureOutput'];
export type PdfRecord = Schemas['PdfRecordOutput'];
export type ImageRequest = Schemas['ImageRequest'];
/** A stored picture (`img_…`), from `image` or a batch item with `output: "image"`. */
export type ImageRecord = Schemas['ImageRecordOutput'];
/** What `list` and `get` answer: a PDF's record or a picture's, told apart by `content_type`. */
export type StoredRecord = PdfRecord | ImageRecord;
export type PdfList = Schemas['PdfList'];
export type Usage = Schemas['Usage'];
export type Health = Schemas['Health'];
export type JobAccepted = Schemas['JobAccepted'];
export type Job = Schemas['JobOutput'];
export type TemplateRequest = Schemas['TemplateRequest'];
export type Template = Schemas['Template'];
export type TemplateSummary = Schemas['TemplateSummary'];
export type TemplateList = Schemas['TemplateList'];
export type TemplatePreviewRequest = Schemas['TemplatePreviewRequest'];
export type SigningKey = Schemas['SigningKey'];
export type SigningKeyRequest = Schemas['SigningKeyRequest'];
export type SigningKeyList = Schemas['SigningKeyList'];
export type { components, paths };
export { errorFromAnswer, errorFromResponse, PdfApiConnectionError, PdfApiError, PdfApiTimeoutError } from './errors.ts';
export { newIdempotencyKey, retryDelayMs, type RequestOptions, type RetryOptions } from './transport.ts';
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookEvent, type WebhookHeaders } from './webhooks.ts';
export { jsonLines, MAX_INLINE_ITEMS } from './bulk.ts';
export type { BulkAccepted, BulkBody, BulkOptions, BulkRequest, BulkResult, ManifestLine, Upload } from './bulk.ts';

/** The client's version, sent in its User-Agent. */
export const VERSION = '0.2.0';

/** A bulk job as `GET /v1/jobs/{job_id}` shows it: a job with its line counts. */
export type BulkJob = Job;

/** A job's state as `waitForJob` reports it while waiting: a bulk job's counts so far (`total` lines, `succeeded`, `failed`). */
export interface JobProgress {
  readonly status: string;
  readonly total?: number | undefined;
  readonly succeeded?: number | undefined;
  readonly failed?: number | undefined;
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

export interface PdfApiClientOptions extends RetryOptions {
  /** Where the API is, e.g. `http://127.0.0.1:3000` or the API Gateway stage URL. */
  readonly baseUrl: string;
  /** `pdfk_…`; without it only the keyless routes (health, download links) answer. */
  readonly apiKey?: string | undefined;
  /** A fetch to use instead of the global one (tests, proxies). */
  readonly fetch?: typeof globalThis.fetch | undefined;
  /** Longest wait for each attempt's answer (60 s); a call's own `timeoutMs` wins. */
  readonly timeoutMs?: number;
}

/** A page of a list, and every item of every page after it with `for await`. */
export interface Paginated<T, Page extends { data: T[]; next_cursor: string | null }> extends PromiseLike<Page>, AsyncIterable<T> {}

export interface PageQuery {
  /** Items per page (the API's default when absent; at most 100). */
  readonly limit?: number | undefined;
  /** Where the page starts: the previous page's `next_cursor`. */
  readonly cursor?: string | undefined;
}

/** One list endpoint as a Paginated: awaiting it reads one page; iterating it reads page after page as it goes. */
function paginated<T, Page extends { data: T[]; next_cursor: string | null }>(read: (query: PageQuery) => Promise<Page>, query: PageQuery): Paginated<T, Page> {
  let first: Promise<Page> | undefined;
  const firstPage = () => (first ??= read(query));
  return {
    then: (onFulfilled, onRejected) => firstPage().then(onFulfilled, onRejected),
    async *[Symbol.asyncIterator]() {
      let page = await firstPage();
      for (;;) {
        yield* page.data;
        if (!page.next_cursor) return;
        page = await read({ ...query, cursor: page.next_cursor });
      }
    },
  };
}

/** A template's preview: the PDF's bytes, its page count and the version rendered. */
export interface TemplatePreview {
  readonly pdf: Uint8Array;
  readonly pages: number | undefined;
  readonly version: number | undefined;
}

export interface Templates {
  /** Saves a template (version 1): its HTML, optional header and footer, default options, data schema and sample data. */
  create(template: TemplateRequest, options?: RequestOptions): Promise<Template>;
  /** The key's templates, newest first; `for await` reads every page. */
  list(query?: PageQuery, options?: RequestOptions): Paginated<TemplateSummary, TemplateList>;
  /** A template as saved: its latest version, or the `version` asked for (versions never change once saved). */
  get(id: string, query?: { version?: number }, options?: RequestOptions): Promise<Template>;
  /** Saves a new version (the whole template, as `create` takes it); earlier versions stay renderable. */
  update(id: string, template: TemplateRequest, options?: RequestOptions): Promise<Template>;
  delete(id: string, options?: RequestOptions): Promise<void>;
  /** The template rendered with `data` (or its sample data) as PDF bytes: nothing stored, nothing charged. */
  preview(id: string, request?: TemplatePreviewRequest, options?: RequestOptions): Promise<TemplatePreview>;
  /** Generates (and stores, and charges) a PDF of the template with `data`: `generate({ template_id, data, … })`. */
  render(id: string, data: Record<string, unknown>, request?: Omit<GenerateRequest, 'template_id' | 'data' | 'html' | 'url' | 'async'>, options?: RequestOptions): Promise<PdfRecord>;
}

/** Signing keys: KMS keys that sign PDFs (the `signature` option) for this API key alone. */
export interface SigningKeys {
  /** A new key and its CSR (`csr_pem`) to have issued by your CA; `self_signed: true` for testing makes it active at once. */
  create(request: SigningKeyRequest, options?: RequestOptions): Promise<SigningKey>;
  /** The key's signing keys, newest first; `for await` reads every page. */
  list(query?: PageQuery, options?: RequestOptions): Paginated<SigningKey, SigningKeyList>;
  get(id: string, options?: RequestOptions): Promise<SigningKey>;
  /** Uploads the chain (PEM, leaf first) its CSR was issued with: the key becomes active. */
  uploadCertificate(id: string, certificateChainPem: string, options?: RequestOptions): Promise<SigningKey>;
  /** No new signatures; the KMS key is scheduled for deletion. */
  delete(id: string, options?: RequestOptions): Promise<void>;
}

export interface PdfApiClient {
  readonly baseUrl: string;
  generate(request: GenerateRequest & { async?: false }, options?: RequestOptions): Promise<PdfRecord>;
  /** `async: true`: a job, accepted; read it with `job` or wait for it with `waitForJob`. */
  generate(request: GenerateRequest & { async: true }, options?: RequestOptions): Promise<JobAccepted>;
  /** A picture (PNG, JPEG, WebP) of html, a url, markdown or a template: stored, listed and charged as a PDF is. */
  image(request: ImageRequest & { async?: false }, options?: RequestOptions): Promise<ImageRecord>;
  image(request: ImageRequest & { async: true }, options?: RequestOptions): Promise<JobAccepted>;
  batch(request: BatchRequest & { async?: false }, options?: RequestOptions): Promise<BatchResponse>;
  batch(request: BatchRequest & { async: true }, options?: RequestOptions): Promise<JobAccepted>;
  /** An asynchronous job: its state, and its `result` once it ended. */
  job(id: string, options?: RequestOptions): Promise<Job>;
  /**
   * Reads the job until it ended (succeeded, failed, or cancelled and wound down), waiting longer
   * between reads as it goes (WaitOptions), and through the API's 429 and 503 answers.
   */
  waitForJob(id: string, options?: WaitOptions): Promise<Job>;
  /** Cancels a bulk job: no new lines start; what is stored stays, the rest of its quota goes back. */
  cancelJob(id: string, options?: RequestOptions): Promise<Job>;
  /** A new upload: `url`, where to PUT a JSON Lines file (no key: the URL is the credential), and the `upload_id` to submit. */
  createUpload(options?: RequestOptions): Promise<Upload>;
  /** Uploads a JSON Lines file (a path in Node, a Blob or bytes) for a bulk job: its upload id. */
  upload(file: string | Blob | Uint8Array): Promise<Upload>;
  /**
   * Submits a bulk job: the items inline when few and small, else uploaded first as a JSON Lines
   * file; a `file` is uploaded then submitted; an `upload_id` as given. Wait for it with `waitForJob`.
   */
  bulk(request: BulkRequest, options?: BulkOptions & RequestOptions): Promise<BulkAccepted>;
  /** A finished bulk job's manifest, line by line as it downloads: each input line's PDF or error. */
  manifest(jobId: string): AsyncGenerator<ManifestLine>;
  /** A finished bulk job's manifest or archive (with `archive: true`) as a response whose body streams the file. */
  jobFile(jobId: string, file: 'manifest' | 'archive', options?: RequestOptions): Promise<Response>;
  /** The key's PDFs and pictures that can still be downloaded, newest first: await it for a page, `for await` for every one. */
  list(query?: PageQuery, options?: RequestOptions): Paginated<StoredRecord, PdfList>;
  get(id: string, options?: RequestOptions): Promise<StoredRecord>;
  delete(id: string, options?: RequestOptions): Promise<void>;
  readonly templates: Templates;
  readonly signingKeys: SigningKeys;
  usage(options?: RequestOptions): Promise<Usage>;
  health(options?: RequestOptions): Promise<Health>;
  /** The file's bytes (a PDF's, a picture's, or a `thumbnail_url`'s), through its download link (a record, or its `url`). */
  download(pdf: StoredRecord | string, options?: RequestOptions): Promise<Uint8Array>;
}

/**
 * A download link's answer, to read or stream: the link needs no key (its signature is the
 * credential) and redirects to storage. A refusal is thrown as the API's error.
 */
export async function fetchDownload(url: string, fetch: typeof globalThis.fetch = globalThis.fetch, signal?: AbortSignal): Promise<Response> {
  const response = await fetch(url, { redirect: 'follow', ...(signal && { signal }) });
  if (response.ok) return response;
  throw await errorFromResponse(response);
}

const ENDED = new Set(['succeeded', 'failed']);

export function createPdfApiClient({ baseUrl, apiKey, fetch, timeoutMs, ...retry }: PdfApiClientOptions): PdfApiClient {
  const transport = new Transport({ baseUrl, apiKey, fetch, ...(timeoutMs !== undefined && { timeoutMs }), ...retry, userAgent: `pdfapi-client/${VERSION}` });
  const json = <T>(call: Parameters<Transport['json']>[0], options?: RequestOptions) => transport.json<T>(call, options);
  const none = async (call: Parameters<Transport['send']>[0], options?: RequestOptions) => {
    const response = await transport.send(call, options);
    await response.body?.cancel();
  };
  const segment = encodeURIComponent;

  const job = (id: string, options?: RequestOptions) => json<Job>({ method: 'GET', path: `/v1/jobs/${segment(id)}` }, options);
  const jobFile = (jobId: string, file: 'manifest' | 'archive', options?: RequestOptions) =>
    // The API answers a redirect to storage; fetch drops the key on the way to another origin.
    transport.send({ method: 'GET', path: `/v1/jobs/${segment(jobId)}/${file}`, accept: '*/*' }, options);
  const createUpload = (options?: RequestOptions) => json<Upload>({ method: 'POST', path: '/v1/uploads' }, options);
  const bulkPort = (options?: RequestOptions): BulkPort => ({
    createUpload: () => createUpload(options),
    putFile: async (url, body) => {
      const put = await (fetch ?? globalThis.fetch)(url, { method: 'PUT', body, ...(options?.signal && { signal: options.signal }) });
      if (!put.ok) throw await errorFromResponse(put);
    },
    submit: (body) => json<BulkAccepted>({ method: 'POST', path: '/v1/pdf/bulk', body, idempotent: true }, options),
    jobFile: (id, file) => jobFile(id, file, options),
  });
  const generate = (body: GenerateRequest, options?: RequestOptions) => json<PdfRecord | JobAccepted>({ method: 'POST', path: '/v1/pdf/generate', body, idempotent: true }, options);

  const signingKeys: SigningKeys = {
    create: (request, options) => json({ method: 'POST', path: '/v1/signing-keys', body: request }, options),
    list: (query = {}, options) => paginated((page) => json<SigningKeyList>({ method: 'GET', path: '/v1/signing-keys', query: { ...page } }, options), query),
    get: (id, options) => json({ method: 'GET', path: `/v1/signing-keys/${segment(id)}` }, options),
    uploadCertificate: (id, certificateChainPem, options) =>
      json({ method: 'PUT', path: `/v1/signing-keys/${segment(id)}/certificate`, body: { certificate_chain_pem: certificateChainPem } }, options),
    delete: (id, options) => none({ method: 'DELETE', path: `/v1/signing-keys/${segment(id)}` }, options),
  };

  const templates: Templates = {
    create: (template, options) => json({ method: 'POST', path: '/v1/templates', body: template }, options),
    list: (query = {}, options) => paginated((page) => json<TemplateList>({ method: 'GET', path: '/v1/templates', query: { ...page } }, options), query),
    get: (id, { version } = {}, options) => json({ method: 'GET', path: `/v1/templates/${segment(id)}`, query: { version } }, options),
    update: (id, template, options) => json({ method: 'PUT', path: `/v1/templates/${segment(id)}`, body: template }, options),
    delete: (id, options) => none({ method: 'DELETE', path: `/v1/templates/${segment(id)}` }, options),
    preview: async (id, request = {}, options) => {
      const response = await transport.send({ method: 'POST', path: `/v1/templates/${segment(id)}/preview`, body: request, accept: 'application/pdf' }, options);
      const header = (name: string) => (response.headers.has(name) ? Number(response.headers.get(name)) : undefined);
      return { pdf: new Uint8Array(await response.arrayBuffer()), pages: header('x-pdf-pages'), version: header('x-template-version') };
    },
    render: async (id, data, request = {}, options) => (await generate({ ...request, template_id: id, data }, options)) as PdfRecord,
  };

  return {
    baseUrl: transport.baseUrl,
    // One implementation for both overloads: the answer is whichever the request asked for.
    generate: generate as PdfApiClient['generate'],
    image: ((body: ImageRequest, options?: RequestOptions) => json({ method: 'POST', path: '/v1/image/generate', body, idempotent: true }, options)) as PdfApiClient['image'],
    batch: ((body: BatchRequest, options?: RequestOptions) => json({ method: 'POST', path: '/v1/pdf/batch', body, idempotent: true }, options)) as PdfApiClient['batch'],
    job,
    waitForJob: async (id, { intervalMs = 1_000, maxIntervalMs = 10_000, timeoutMs: limitMs, onProgress, signal } = {}) => {
      const started = Date.now();
      for (let wait = intervalMs; ; wait = Math.min(wait * 1.5, maxIntervalMs)) {
        let current: Job;
        try {
          // The transport already waits out a 429 or 503 a few times; a longer overload is waited here.
          current = await job(id, signal ? { signal } : {});
        } catch (error) {
          const busy = error instanceof PdfApiError && (error.status === 429 || error.status === 503);
          if (!busy) throw error;
          const after = Number(error.details.retry_after);
          await sleep(Number.isFinite(after) ? after * 1000 : wait, signal);
          continue;
        }
        onProgress?.({ status: current.status, total: current.total, succeeded: current.succeeded, failed: current.failed, job: current });
        // A cancelled bulk job has ended once it wound down (its completion time is set).
        if (ENDED.has(current.status) || (current.status === 'cancelled' && current.completed_at !== undefined)) return current;
        // A bulk job (it has a total) may run for hours; any other job ends within 15 minutes.
        const limit = limitMs ?? (current.total !== undefined ? Number.POSITIVE_INFINITY : 16 * 60_000);
        if (Date.now() + wait - started > limit) throw new PdfApiError(0, 'job_wait_timeout', `Job ${id} is still ${current.status} after ${limit} ms.`);
        await sleep(wait, signal);
      }
    },
    cancelJob: (id, options) => json({ method: 'DELETE', path: `/v1/jobs/${segment(id)}` }, options),
    createUpload,
    upload: (file) => upload(bulkPort(), file),
    bulk: (request, options) => bulk(bulkPort(options), request, options),
    manifest: (jobId) => manifestLines(bulkPort(), jobId),
    jobFile,
    list: (query = {}, options) => paginated((page) => json<PdfList>({ method: 'GET', path: '/v1/pdf', query: { ...page } }, options), query),
    get: (id, options) => json({ method: 'GET', path: `/v1/pdf/${segment(id)}` }, options),
    delete: (id, options) => none({ method: 'DELETE', path: `/v1/pdf/${segment(id)}` }, options),
    templates,
    signingKeys,
    usage: (options) => json({ method: 'GET', path: '/v1/usage' }, options),
    health: (options) => json({ method: 'GET', path: '/health' }, options),
    download: async (pdf, options) => {
      // Keyless: the link's signature is the credential. Retried like any read.
      const url = typeof pdf === 'string' ? pdf : pdf.url;
      const response = await transport.send({ method: 'GET', path: '', absoluteUrl: url, keyless: true, accept: '*/*' }, options);
      return new Uint8Array(await response.arrayBuffer());
    },
  };
}
