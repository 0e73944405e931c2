/**
 * Where the PDF workers' code is (./pdf-workers.ts starts them): in a Lambda asset, each bundled on
 * its own beside the function's index.mjs under its name (cdk/bundling.ts writes it where the
 * function's bundle names it); in the project, this directory's TypeScript, which Node runs as is.
 */

/** Joins a batch's PDFs (./merge-worker.ts). pdf-lib only. */
export const BUNDLED_MERGE_WORKER_NAME = 'merge-worker.mjs';
export const MERGE_WORKER_SOURCE = new URL('./merge-worker.ts', import.meta.url);

/** Finishes a printed PDF (./finishing-worker.ts): pdf-lib, and qpdf from the Chromium layer. */
export const BUNDLED_FINISHING_WORKER_NAME = 'finishing-worker.mjs';
export const FINISHING_WORKER_SOURCE = new URL('./finishing-worker.ts', import.meta.url);
