/**
 * Why one document could not be produced. The codes are the batch item codes of decisions.md;
 * each API surface maps them to its own answer (see `lib/api/document-errors.ts`).
 */
export type DocumentFailureCode =
  | 'INVALID_HTML'
  | 'INVALID_OPTIONS'
  | 'URL_NOT_ALLOWED'
  | 'URL_UNREACHABLE'
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
