/**
 * Why one document could not be produced. Most codes are the batch item codes of decisions.md; of
 * our own, an unreachable URL is reported as RENDER_FAILED in batches, while a document over the
 * page or size limit and a url answering with an error status (URL_FETCH_FAILED, shared/spec/beyond.md)
 * keep their own codes there too (lib/documents/batch.ts). The single endpoint maps them in
 * `documentErrorToApiError`.
 */
export type DocumentFailureCode =
  | 'INVALID_HTML'
  | 'INVALID_OPTIONS'
  | 'URL_NOT_ALLOWED'
  | 'URL_UNREACHABLE'
  /** The url's main document answered 4xx or 5xx (and the caller did not ask to print it anyway). */
  | 'URL_FETCH_FAILED'
  | 'TOO_MANY_PAGES'
  | 'PDF_TOO_LARGE'
  /** The document made its renderer hold more memory than the budget (lib/render/memory-budget.ts). */
  | 'MEMORY_LIMIT_EXCEEDED'
  | 'RENDER_TIMEOUT'
  | 'RENDER_FAILED'
  /** A stored template (lib/documents/templates.ts) that does not exist for the caller, or no longer. */
  | 'TEMPLATE_NOT_FOUND'
  /** The template engine refused the template with this data (over its limits, a runtime error), or its output is not HTML. */
  | 'TEMPLATE_ERROR'
  /** The `signature` option's signing key does not exist for the caller (lib/signatures/). */
  | 'SIGNING_KEY_NOT_FOUND'
  /** The signing key has no valid certificate (none uploaded yet, or expired). */
  | 'SIGNING_KEY_NOT_READY'
  /** The time-stamp authority did not answer in time, or refused, for `timestamp: true`. */
  | 'TIMESTAMP_FAILED'
  /** A service the document needs (KMS, throttling its Sign) stayed busy past the SDK's retries: 503 with Retry-After. */
  | 'SERVICE_BUSY';

/** The most characters of a caller's input an error message quotes. */
export const MAX_QUOTED_CHARS = 100;

/**
 * A caller's input as an error message quotes it: at most MAX_QUOTED_CHARS characters, so a message
 * never echoes a megabyte back (or carries it into the logs).
 */
export function quoteInput(input: string): string {
  const characters = Array.from(input.slice(0, MAX_QUOTED_CHARS * 2));
  return characters.length > MAX_QUOTED_CHARS ? `${characters.slice(0, MAX_QUOTED_CHARS).join('')}…` : characters.join('');
}

export class DocumentError extends Error {
  readonly code: DocumentFailureCode;

  constructor(code: DocumentFailureCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DocumentError';
    this.code = code;
  }
}
