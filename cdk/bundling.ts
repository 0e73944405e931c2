/**
 * What bundling a function adds to esbuild's defaults, shared by every function (service-function.ts)
 * and run as a script after each bundle is written (`node cdk/bundling.ts <asset dir>`): the
 * worker threads (customer code, bulk upload checks, merging and finishing PDFs) bundled as entry points of their own beside
 * index.mjs, where the function starts one. Kept free of aws-cdk-lib, so running it per function costs esbuild's time only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUNDLED_UPLOAD_CHECK_WORKER_NAME, UPLOAD_CHECK_WORKER_SOURCE } from '#lib/bulk/upload-check-worker-file.ts';
import { BUNDLED_WORKER_NAME, WORKER_SOURCE } from '#lib/customer-code/worker-file.ts';
import { BUNDLED_FINISHING_WORKER_NAME, BUNDLED_MERGE_WORKER_NAME, FINISHING_WORKER_SOURCE, MERGE_WORKER_SOURCE } from '#lib/documents/pdf-worker-files.ts';
import { LAYER_PACKAGES } from './layer-packages.ts';

/**
 * Bundled CommonJS dependencies call `require` (for Node built-ins); an ES module has none, so the
 * bundle gets one.
 */
export const CREATE_REQUIRE_BANNER =
  "import { createRequire as __pdfApiCreateRequire } from 'node:module'; const require = __pdfApiCreateRequire(import.meta.url);";

/**
 * The worker threads a function may start, each bundled on its own under the name its starter looks
 * for, with what it leaves to the Chromium layer as the function's own bundle does: the finishing
 * worker encrypts with qpdf, which only the layer carries (it is started only where documents are
 * printed, by functions that have the layer).
 */
export const WORKER_ENTRIES: readonly { readonly name: string; readonly source: URL; readonly external?: readonly string[] }[] = [
  { name: BUNDLED_WORKER_NAME, source: WORKER_SOURCE },
  { name: BUNDLED_UPLOAD_CHECK_WORKER_NAME, source: UPLOAD_CHECK_WORKER_SOURCE },
  { name: BUNDLED_MERGE_WORKER_NAME, source: MERGE_WORKER_SOURCE },
  { name: BUNDLED_FINISHING_WORKER_NAME, source: FINISHING_WORKER_SOURCE, external: LAYER_PACKAGES },
];

/**
 * Bundles each worker beside an asset's index.mjs when that bundle starts one (it names the file:
 * lib/customer-code/pool.ts, lib/bulk/upload-check-pool.ts or lib/documents/pdf-workers.ts is in it). The fact "this function
 * runs customer code" (or reads bulk uploads) is read from what the function imports, so no list of
 * functions can drift from it. True when it bundled the customer-code worker.
 */
export async function bundleCustomerCodeWorker(assetDir: string): Promise<boolean> {
  const index = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
  let customerCode = false;
  for (const { name, source, external = [] } of WORKER_ENTRIES) {
    if (!index.includes(name)) continue;
    await build({
      entryPoints: [fileURLToPath(source)],
      outfile: join(assetDir, name),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      mainFields: ['module', 'main'],
      external: [...external],
      banner: { js: CREATE_REQUIRE_BANNER },
      minify: true,
      keepNames: true,
      logLevel: 'warning',
    });
    if (name === BUNDLED_WORKER_NAME) customerCode = true;
  }
  return customerCode;
}

if (import.meta.main) {
  const [assetDir] = process.argv.slice(2);
  if (!assetDir) throw new Error('usage: node cdk/bundling.ts <asset directory>');
  await bundleCustomerCodeWorker(assetDir);
}
