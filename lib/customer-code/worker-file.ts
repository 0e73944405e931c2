/**
 * Where a customer-code worker's code is: in a Lambda asset, bundled on its own beside the
 * function's index.mjs under this name (cdk/bundling.ts writes it where the function's bundle
 * names it); in the project, ./worker.ts, which Node runs as is.
 */
export const BUNDLED_WORKER_NAME = 'customer-code-worker.mjs';

/** The worker's entry point in the project, bundled as BUNDLED_WORKER_NAME. */
export const WORKER_SOURCE = new URL('./worker.ts', import.meta.url);
