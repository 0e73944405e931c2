/**
 * The client's errors: every failure a caller can meet is a PdfApiError (or one of its two kinds
 * that never reached the API), so one `catch (error) { if (error instanceof PdfApiError) … }` covers
 * the API's refusals, timeouts and an unreachable service alike.
 */

/** An answer other than success: the API's error code and message, and any extra fields it gave. */
export class PdfApiError extends Error {
  override readonly name: string = 'PdfApiError';
  /** The HTTP status; 0 when no answer came (PdfApiConnectionError, PdfApiTimeoutError). */
  readonly status: number;
  /** The API's error code (`quota_exceeded`, `rate_limit_exceeded`, …), or `http_<status>` for an answer that is not the API's. */
  readonly code: string;
  /** The error object's other fields, such as `retry_after` (seconds), `max_batch_size` or `request_id`. */
  readonly details: Readonly<Record<string, unknown>>;
  /** The request's id, for support: the API's `request_id`, or the gateway's request id header. */
  readonly requestId: string | undefined;

  constructor(status: number, code: string, message: string, details: Readonly<Record<string, unknown>> = {}, requestId?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.code = code;
    this.details = details;
    this.requestId = requestId ?? (typeof details.request_id === 'string' ? details.request_id : undefined);
  }
}

/** The API could not be reached (refused, reset, unknown host), after the retries. `cause` is fetch's own error. */
export class PdfApiConnectionError extends PdfApiError {
  override readonly name: string = 'PdfApiConnectionError';
  constructor(message: string, cause: unknown) {
    super(0, 'connection_error', message, {}, undefined, { cause });
  }
}

/** No answer within the request's `timeoutMs`. A request that creates PDFs may still have run: retry it with the same idempotency key. */
export class PdfApiTimeoutError extends PdfApiError {
  override readonly name: string = 'PdfApiTimeoutError';
  constructor(message: string) {
    super(0, 'timeout', message);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The gateway's id of the request, when the answer carries one. */
function headerRequestId(response: Response): string | undefined {
  return response.headers.get('x-request-id') ?? response.headers.get('x-amzn-requestid') ?? response.headers.get('apigw-requestid') ?? undefined;
}

/** Seconds the answer asks to wait (`Retry-After`: seconds or an HTTP date), if it says. */
export function retryAfterSeconds(response: Response, now = Date.now()): number | undefined {
  const header = response.headers.get('retry-after');
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, Math.ceil((date - now) / 1000)) : undefined;
}

/** The error an unsuccessful answer stands for: the documented `{ error: { code, message, … } }`, or the status. */
export function errorFromAnswer(response: Response, body: unknown): PdfApiError {
  // A 503 or 429 from in front of the API (API Gateway throttling) still says when to come back.
  const retryAfter = retryAfterSeconds(response);
  const extra = retryAfter !== undefined ? { retry_after: retryAfter } : {};
  if (isRecord(body) && isRecord(body.error) && typeof body.error.code === 'string') {
    const { code, message, ...rest } = body.error;
    return new PdfApiError(response.status, code, typeof message === 'string' ? message : code, { ...extra, ...rest }, typeof rest.request_id === 'string' ? rest.request_id : headerRequestId(response));
  }
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
  return new PdfApiError(response.status, `http_${response.status}`, text || `${response.status} ${response.statusText}`.trim(), extra, headerRequestId(response));
}

/** An unsuccessful answer's error, its body read as JSON when it is. */
export async function errorFromResponse(response: Response): Promise<PdfApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not the API's JSON (a gateway or storage answered): the status and text say what happened.
  }
  return errorFromAnswer(response, body);
}
