/**
 * What bundling a function adds to esbuild's defaults, shared by every function (service-function.ts)
 * and run as a script after each bundle is written (`node cdk/bundling.ts <asset dir>`): the
 * customer-code worker bundled as a second entry point beside index.mjs, where the function starts
 * one. Kept free of aws-cdk-lib, so running it per function costs esbuild's time only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUNDLED_WORKER_NAME, WORKER_SOURCE } from '#lib/customer-code/worker-file.ts';

/**
 * Bundled CommonJS dependencies call `require` (for Node built-ins); an ES module has none, so the
 * bundle gets one.
 */
export const CREATE_REQUIRE_BANNER =
  "import { createRequire as __pdfApiCreateRequire } from 'node:module'; const require = __pdfApiCreateRequire(import.meta.url);";

/**
 * Bundles the customer-code worker beside an asset's index.mjs when that bundle starts one (it
 * names the file: lib/customer-code/pool.ts is in it). The fact "this function runs customer code"
 * is read from what the function imports, so no list of functions can drift from it.
 */
export async function bundleCustomerCodeWorker(assetDir: string): Promise<boolean> {
  if (!readFileSync(join(assetDir, 'index.mjs'), 'utf8').includes(BUNDLED_WORKER_NAME)) return false;
  await build({
    entryPoints: [fileURLToPath(WORKER_SOURCE)],
    outfile: join(assetDir, BUNDLED_WORKER_NAME),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    mainFields: ['module', 'main'],
    banner: { js: CREATE_REQUIRE_BANNER },
    minify: true,
    keepNames: true,
    logLevel: 'warning',
  });
  return true;
}

if (import.meta.main) {
  const [assetDir] = process.argv.slice(2);
  if (!assetDir) throw new Error('usage: node cdk/bundling.ts <asset directory>');
  await bundleCustomerCodeWorker(assetDir);
}
