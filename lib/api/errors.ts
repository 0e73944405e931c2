/**
 * Every error the API answers with, and the one error type handlers throw.
 *
 * `API_ERRORS` is the catalogue: each code's HTTP status, what it means and the extra fields its
 * body carries. `ApiError` takes its status from it, so the server cannot answer with a code the
 * OpenAPI document (lib/api/openapi.ts, built from this table) does not describe.
 *
 * Anything else thrown in a handler is a bug or an outage and becomes a plain 500 `render_failed`
 * answer with no internals (see `errorResponder`). `expose` follows middy's convention: only
 * exposed errors show their message to the caller.
 */
import { z } from 'zod';

const seconds = z.int().min(1).meta({ description: 'Whole seconds to wait before retrying (at least 1); also sent as `Retry-After`.' });
const requestId = z.string().meta({ description: 'The request id, for support: it names the request in our logs.' });

interface ErrorEntry {
  readonly status: number;
  readonly description: string;
  /** Fields beside `code` and `message`; a `?` in the name would not be JSON, so optional ones say so in the schema. */
  readonly extra?: Record<string, z.ZodType>;
}

export const API_ERRORS = {
  invalid_request: {
    status: 400,
    description:
      'The request is not valid: none or several of html, url and template_id, an unknown or out-of-range option (the message names the field and what is allowed), malformed HTML, a refused url, `data` that does not match the template’s `data_schema` (the message names the JSON pointer, such as `/lines/3/price: must be number`), a template that does not compile, or a body that is not a JSON object.',
  },
  url_not_allowed: {
    status: 400,
    description: 'The `webhook_url` is refused: not https, or not a publicly reachable host (private, loopback and link-local addresses are refused, as for documents). Nothing was charged.',
  },
  batch_too_large: {
    status: 400,
    description: "More items than the key's tier allows in one batch (at most 100). Nothing was rendered or charged.",
    extra: { max_batch_size: z.int().meta({ description: "The most items this key may send in one batch." }) },
  },
  unauthorized: { status: 401, description: 'The API key is missing, unknown or revoked.' },
  quota_exceeded: {
    status: 402,
    description: "The month's quota cannot cover this request (a batch needs one PDF per item). Nothing was rendered.",
    extra: {
      quota_reset_at: z.iso.datetime().meta({ description: 'When the quota resets: 00:00:00Z on the first day of next month.' }),
      quota_remaining: z.int().min(0).meta({ description: 'PDFs left this month.' }),
    },
  },
  template_limit_exceeded: {
    status: 403,
    description: 'The key has as many templates as its tier allows; delete one (or upgrade) to create another. Saving a new version of an existing template is not limited by this.',
    extra: { max_templates: z.int().meta({ description: 'The most templates this key may keep.' }) },
  },
  signing_key_limit_exceeded: {
    status: 403,
    description: 'The key already keeps as many signing keys as its tier allows (each is a KMS key billed by the month); delete one to create another.',
    extra: { max_signing_keys: z.int().meta({ description: 'The most signing keys this key may keep.' }) },
  },
  signing_key_not_found: {
    status: 404,
    description: 'No signing key with this `signing_key_id` exists for this API key (never made, deleted, or another key’s). Nothing was charged.',
  },
  signing_key_not_ready: {
    status: 409,
    description: 'The signing key has no valid certificate: upload the chain its CSR was issued with (`PUT /v1/signing-keys/{signing_key_id}/certificate`), or a new one if it expired. Nothing was charged.',
  },
  timestamp_failed: {
    status: 502,
    description: 'The time-stamp authority (RFC 3161) did not answer in time, or answered with an error, for a signature with `timestamp: true`. Nothing was charged; retry, or sign without a time stamp.',
    extra: { request_id: requestId },
  },
  not_found: {
    status: 404,
    description:
      'No such route, PDF, download link, job or template (another key’s reads as missing); on generate, the `template_id` (or its `template_version`) does not exist for this key, was deleted, or that version is no longer kept. Nothing was charged.',
  },
  method_not_allowed: { status: 405, description: 'The path exists, but not with this method; `Allow` lists the methods it takes.' },
  request_in_progress: {
    status: 409,
    description: 'A request with the same `Idempotency-Key` is still running. Retry once it has answered: the retry gets its response.',
  },
  upload_in_use: {
    status: 409,
    description:
      'The `upload_id` already backs a bulk job, named by `job_id`: an upload makes one job, so its lines are never run or charged twice. Follow that job, or upload the file again (`POST /v1/uploads`) for a new one. To retry a submission safely, send it with an `Idempotency-Key`: the retry answers the first job.',
    extra: { job_id: z.string().meta({ description: 'The job the upload backs.' }) },
  },
  link_expired: { status: 410, description: 'The download link has expired.' },
  pdf_gone: {
    status: 410,
    description:
      'With an `Idempotency-Key`: the PDF the first request made was deleted or has expired since (a replay, or a retry after a crash). It was charged once; send a new key to make it again.',
    extra: { pdf_id: z.string().meta({ description: 'The PDF the request made.' }) },
  },
  payload_too_large: { status: 413, description: 'The request body is larger than 5 MB, or a template is larger than the key’s tier allows (the message gives both sizes).' },
  url_fetch_failed: {
    status: 422,
    description: 'The url answered with an HTTP error status (4xx or 5xx), named in the message. Send `fail_on_http_status: false` to print the error page instead.',
  },
  too_many_pages: {
    status: 422,
    description: 'The document is longer than the page limit. Nothing was charged.',
    extra: { max_pages: z.int().meta({ description: 'The most pages one PDF may have.' }) },
  },
  pdf_too_large: {
    status: 422,
    description: 'The PDF would be larger than the size limit. Nothing was charged.',
    extra: { max_pdf_bytes: z.int().meta({ description: 'The largest PDF, in bytes, the service stores.' }) },
  },
  memory_limit_exceeded: {
    status: 422,
    description:
      'The document needed more memory to render than the per-document limit (a huge image, canvas or script allocation, or a giant page with filters) and was stopped. Nothing was charged; retrying will not help.',
    extra: { memory_limit_mb: z.int().meta({ description: 'The most memory, in MB, one document may use while it renders.' }) },
  },
  template_error: {
    status: 422,
    description:
      'The stored template could not be rendered with this data: it went over the template engine’s limits (time, output size, loop length), failed at runtime, or rendered something that is not usable HTML. The message says which. Nothing was charged.',
  },
  idempotency_key_reused: {
    status: 422,
    description: 'This `Idempotency-Key` was used with another request (another path or body) in the last 24 hours. Nothing was run or charged.',
  },
  rate_limit_exceeded: {
    status: 429,
    description: "Too many requests in the key's one-minute window (a batch is one request), or, without `retry_after`, more than the whole API takes at once (API Gateway's own throttle).",
    extra: { retry_after: seconds.optional() },
  },
  render_failed: {
    status: 500,
    description: 'The PDF could not be rendered, or an internal error stopped the request. Nothing was charged; retrying is safe.',
    extra: { request_id: requestId },
  },
  service_busy: {
    status: 503,
    description: 'The service is at capacity. Nothing was charged; retry after `retry_after` seconds.',
    extra: { retry_after: seconds, request_id: requestId },
  },
  render_timeout: {
    status: 504,
    description: 'Rendering took longer than allowed, or a readiness condition (named in the message) never held. Nothing was charged.',
    extra: { request_id: requestId },
  },
} as const satisfies Record<string, ErrorEntry>;

export type ApiErrorCode = keyof typeof API_ERRORS;

export class ApiError extends Error {
  readonly status: number;
  readonly code: ApiErrorCode;
  readonly extra: Record<string, unknown>;
  readonly expose: boolean;
  readonly headers: Record<string, string>;

  constructor(
    code: ApiErrorCode,
    message: string,
    options: { extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = API_ERRORS[code].status;
    this.code = code;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
    this.expose = this.status < 500 || code === 'render_failed' || code === 'render_timeout' || code === 'service_busy' || code === 'timestamp_failed';
  }
}

export const invalidRequest = (message: string): ApiError => new ApiError('invalid_request', message);

export const unauthorized = (): ApiError =>
  new ApiError('unauthorized', 'Invalid or missing API key. Send it as "Authorization: Bearer <API_KEY>".');

export const notFound = (message = 'Not found.'): ApiError => new ApiError('not_found', message);

/**
 * 503: this process cannot take the work now (lib/render/capacity.ts). Decided before anything is
 * charged; `retry_after` and `Retry-After` give whole seconds, at least 1.
 */
export const serviceBusy = (retryAfterSeconds: number, message?: string): ApiError => {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError('service_busy', message ?? `The service is busy. Nothing was charged; retry in ${seconds} s.`, {
    extra: { retry_after: seconds },
    headers: { 'Retry-After': String(seconds) },
  });
};

/** The body every error response carries: `{ error: { code, message, ...extra } }`. */
export function errorBody(error: ApiError): { error: Record<string, unknown> } {
  return { error: { code: error.code, message: error.message, ...error.extra } };
}

/**
 * What API Gateway answers when Lambda refuses to run the function (throttled: the account's or the
 * function's concurrency is taken), from its INTEGRATION_FAILURE gateway response
 * (cdk/constructs/rest-api.ts), and the local gateway alike (lib/local/gateway.ts): 503 `service_busy`.
 */
export const THROTTLED_FUNCTION = {
  message: 'The service is busy: no function was free to take this request. Nothing was charged; retry in 2 s.',
  retryAfterSeconds: 2,
} as const;
