/**
 * Where an upload-check worker's code is: in a Lambda asset, bundled on its own beside the
 * function's index.mjs under this name (cdk/bundling.ts writes it where the function's bundle names
 * it); in the project, ./upload-check-worker.ts, which Node runs as is.
 */
export const BUNDLED_UPLOAD_CHECK_WORKER_NAME = 'upload-check-worker.mjs';

/** The worker's entry point in the project, bundled as BUNDLED_UPLOAD_CHECK_WORKER_NAME. */
export const UPLOAD_CHECK_WORKER_SOURCE = new URL('./upload-check-worker.ts', import.meta.url);
