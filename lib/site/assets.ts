/**
 * The files the docs page and the playground load: an allow-list by name (nothing else under
 * `/assets/` is served, whatever the path says), with where each comes from in the checkout.
 * The CDK stack copies them beside the site function's bundle (cdk/constructs/service-function.ts).
 */
export const SITE_ASSETS = {
  // Redoc's self-contained browser build (React and all): no request leaves for a CDN.
  'redoc.standalone.js': { source: 'node_modules/redoc/bundles/redoc.standalone.js', type: 'text/javascript; charset=utf-8' },
  'docs.js': { source: 'lib/site/assets/docs.js', type: 'text/javascript; charset=utf-8' },
  'docs.css': { source: 'lib/site/assets/docs.css', type: 'text/css; charset=utf-8' },
  'playground.js': { source: 'lib/site/assets/playground.js', type: 'text/javascript; charset=utf-8' },
  'playground.css': { source: 'lib/site/assets/playground.css', type: 'text/css; charset=utf-8' },
  // pdf.js (Mozilla's own build), which the playground draws PDFs with, and its worker.
  'pdf.min.mjs': { source: 'node_modules/pdfjs-dist/build/pdf.min.mjs', type: 'text/javascript; charset=utf-8' },
  'pdf.worker.min.mjs': { source: 'node_modules/pdfjs-dist/build/pdf.worker.min.mjs', type: 'text/javascript; charset=utf-8' },
  // The worked invoice example (examples/invoice/), which the playground's template tab starts from.
  // Its HTML is served as text: a template is source to edit, never a page of this origin.
  'example-invoice.html': { source: 'examples/invoice/template.html', type: 'text/plain; charset=utf-8' },
  'example-invoice-footer.html': { source: 'examples/invoice/footer.html', type: 'text/plain; charset=utf-8' },
  'example-invoice-data.json': { source: 'examples/invoice/data.json', type: 'application/json; charset=utf-8' },
  'example-invoice-schema.json': { source: 'examples/invoice/schema.json', type: 'application/json; charset=utf-8' },
  'example-invoice-options.json': { source: 'examples/invoice/options.json', type: 'application/json; charset=utf-8' },
} as const;

export type SiteAssetName = keyof typeof SITE_ASSETS;

/** The folder beside the site function's bundle that holds the assets in Lambda. */
export const SITE_ASSETS_DIR = 'site-assets';
