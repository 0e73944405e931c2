/**
 * The one error type the API surfaces. Anything else thrown in a handler is a bug or an outage and
 * becomes a plain 500 `render_failed`-style answer with no internals (see `errorResponder`).
 *
 * `expose` follows middy's convention: only exposed errors show their message to the caller.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly extra: Record<string, unknown>;
  readonly expose: boolean;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { extra?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
    this.expose = status < 500 || code === 'render_failed' || code === 'render_timeout' || code === 'service_busy';
  }
}

export const invalidRequest = (message: string): ApiError => new ApiError(400, 'invalid_request', message);

export const unauthorized = (): ApiError =>
  new ApiError(401, 'unauthorized', 'Invalid or missing API key. Send it as "Authorization: Bearer <API_KEY>".');

export const notFound = (message = 'Not found.'): ApiError => new ApiError(404, 'not_found', message);

/**
 * 503: this process cannot take the work now (lib/render/capacity.ts). Decided before anything is
 * charged; `retry_after` and `Retry-After` give whole seconds, at least 1.
 */
export const serviceBusy = (retryAfterSeconds: number, message?: string): ApiError => {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError(503, 'service_busy', message ?? `The service is busy. Nothing was charged; retry in ${seconds} s.`, {
    extra: { retry_after: seconds },
    headers: { 'Retry-After': String(seconds) },
  });
};

/** The body every error response carries: `{ error: { code, message, ...extra } }`. */
export function errorBody(error: ApiError): { error: Record<string, unknown> } {
  return { error: { code: error.code, message: error.message, ...error.extra } };
}
