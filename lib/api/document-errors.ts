/**
 * How a document that could not be made reads in the API: the single endpoint's error answer, and
 * an asynchronous generate job's `result` when it failed (lib/jobs/jobs.ts).
 */
import { settings } from '#lib/settings.ts';
import type { DocumentError } from '#lib/render/errors.ts';
import { ApiError, invalidRequest, notFound, serviceBusy } from './errors.ts';

/** How a document failure reads on the single-document endpoints. */
export function documentErrorToApiError(error: DocumentError): ApiError {
  switch (error.code) {
    case 'INVALID_HTML':
    case 'INVALID_OPTIONS':
    case 'URL_NOT_ALLOWED':
    case 'URL_UNREACHABLE':
      return invalidRequest(error.message);
    // The site answered, with an error: the message gives its status (shared/spec/beyond.md).
    case 'URL_FETCH_FAILED':
      return new ApiError('url_fetch_failed', error.message);
    // The request was well formed; what it describes is over a limit, and retrying will not help.
    case 'TOO_MANY_PAGES':
      return new ApiError('too_many_pages', error.message, { extra: { max_pages: settings.maxPdfPages } });
    case 'PDF_TOO_LARGE':
      return new ApiError('pdf_too_large', error.message, { extra: { max_pdf_bytes: settings.maxPdfBytes } });
    case 'MEMORY_LIMIT_EXCEEDED':
      return new ApiError('memory_limit_exceeded', error.message, { extra: { memory_limit_mb: settings.renderMemoryBudgetMb } });
    case 'RENDER_TIMEOUT':
      // Our own words (the limit, or which readiness condition never held), never a browser's.
      return new ApiError('render_timeout', error.message);
    case 'RENDER_FAILED':
      return new ApiError('render_failed', 'The PDF could not be rendered. Nothing was charged; please retry.');
    case 'TEMPLATE_NOT_FOUND':
      return notFound(error.message);
    // The template is the caller's code: its message is the engine's own, written for them.
    case 'TEMPLATE_ERROR':
      return new ApiError('template_error', error.message);
    case 'SIGNING_KEY_NOT_FOUND':
      return new ApiError('signing_key_not_found', error.message);
    case 'SIGNING_KEY_NOT_READY':
      return new ApiError('signing_key_not_ready', error.message);
    case 'TIMESTAMP_FAILED':
      return new ApiError('timestamp_failed', error.message);
    case 'SERVICE_BUSY':
      return serviceBusy(1, error.message);
  }
}
