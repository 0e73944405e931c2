/**
 * Why one document could not be produced. Most codes are the batch item codes of decisions.md; the
 * two of our own (an unreachable URL, a document over the page or size limit) are reported as
 * RENDER_FAILED in batches. The single endpoint maps them in `documentErrorToApiError`.
 */
export type DocumentFailureCode =
  | 'INVALID_HTML'
  | 'INVALID_OPTIONS'
  | 'URL_NOT_ALLOWED'
  | 'URL_UNREACHABLE'
  | 'TOO_LARGE'
  | 'RENDER_TIMEOUT'
  | 'RENDER_FAILED';

export class DocumentError extends Error {
  readonly code: DocumentFailureCode;

  constructor(code: DocumentFailureCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DocumentError';
    this.code = code;
  }
}
