/**
 * The files of pdf.js that draw a PDF's thumbnail in the browser (lib/render/thumbnail.ts), by their
 * path under node_modules: the library and its worker, both minified ES modules (about 1.7 MB
 * together). The rendering functions' bundles ship them beside their code as they ship the fonts
 * (cdk/constructs/service-function.ts), rather than the whole 41 MB package in the layer.
 */
export const PDFJS_LIBRARY_PATH = 'pdfjs-dist/build/pdf.min.mjs';
export const PDFJS_WORKER_PATH = 'pdfjs-dist/build/pdf.worker.min.mjs';
export const PDFJS_BUNDLE_PATHS: readonly string[] = [PDFJS_LIBRARY_PATH, PDFJS_WORKER_PATH, 'pdfjs-dist/LICENSE'];
