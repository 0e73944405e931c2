/**
 * The developer surface's pages and assets: the API reference (`GET /docs`, Redoc rendering
 * `/v1/openapi.json`), the playground (`GET /`) and the files they load (`GET /assets/{name}`).
 *
 * Nothing is loaded from anywhere else: no CDN, no web fonts, no inline script. Each page carries a
 * Content-Security-Policy that allows exactly what it needs, so a customer's network policy and our
 * own are both satisfied, and a script injected into a page would have nowhere to send a key.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { notFound } from '#lib/api/errors.ts';
import { header, publicBaseUrl } from '#lib/api/http.ts';
import { pdfStore } from '#lib/aws/stores.ts';
import { downloadOrigin } from '#lib/storage/pdfs.ts';
import { EncodedFile, pickCoding } from './asset-encoding.ts';
import { SITE_ASSETS, SITE_ASSETS_DIR, type SiteAssetName } from './assets.ts';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Where an asset's bytes are: beside the bundle in Lambda (copied there at synth time, see
 * cdk/constructs/service-function.ts), else at its source in the checkout.
 */
async function readAsset(name: SiteAssetName): Promise<Buffer> {
  try {
    return await readFile(join(here, SITE_ASSETS_DIR, name));
  } catch {
    return readFile(join(here, '..', '..', SITE_ASSETS[name].source));
  }
}

const cache = new Map<SiteAssetName, EncodedFile>();

const COMMON_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

function csp(directives: Record<string, string>): string {
  const policy = {
    'default-src': "'none'",
    'base-uri': "'self'",
    'form-action': "'none'",
    'frame-ancestors': "'none'",
    ...directives,
  };
  return Object.entries(policy)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

function page(html: string, policy: string): APIGatewayProxyResult {
  return {
    statusCode: 200,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache', 'Content-Security-Policy': policy, ...COMMON_HEADERS },
    body: html,
  };
}

/**
 * The page's base is the API's public address, so that its relative URLs (assets, the document,
 * the API itself) work at the root of a local stack and under an API Gateway stage (`/prod`) alike.
 */
function docsPage(baseUrl: string): APIGatewayProxyResult {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<base href="${escapeAttribute(baseUrl)}/">
<title>PDF API reference</title>
<link rel="stylesheet" href="assets/docs.css">
</head>
<body>
<div id="redoc" data-spec-url="v1/openapi.json"></div>
<script src="assets/redoc.standalone.js"></script>
<script src="assets/docs.js"></script>
</body>
</html>`;
  // Redoc styles itself with styled-components (style elements it writes at run time, hence
  // 'unsafe-inline' for styles only) and runs its search index in a worker made from a blob: URL.
  // Its sidebar credits Redocly with a logo from cdn.redoc.ly, always: img-src stops that request
  // before it leaves (Redoc then hides the image), as test/integration/site.test.ts checks.
  return page(
    html,
    csp({
      'script-src': "'self'",
      'style-src': "'self' 'unsafe-inline'",
      'img-src': "'self' data:",
      'font-src': "'self'",
      'connect-src': "'self'",
      'worker-src': 'blob:',
    }),
  );
}

async function playgroundPage(baseUrl: string): Promise<APIGatewayProxyResult> {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<base href="${escapeAttribute(baseUrl)}/">
<title>PDF API playground</title>
<link rel="stylesheet" href="assets/playground.css">
<script type="module" src="assets/playground.js"></script>
</head>
<body>
<header>
  <h1>PDF API playground</h1>
  <nav><a href="docs">API reference</a> · <a href="v1/openapi.json">OpenAPI document</a></nav>
</header>
<main>
  <section class="key">
    <label for="api-key">API key</label>
    <input id="api-key" type="password" autocomplete="off" spellcheck="false" placeholder="Paste your key: pdfk_…">
    <small>Kept in this tab only (sessionStorage). Make one with <code>npm run keys -- create --tier pro</code>.</small>
  </section>
  <div class="tabs" role="tablist">
    <button type="button" role="tab" id="tab-single" aria-selected="true" aria-controls="single">One PDF</button>
    <button type="button" role="tab" id="tab-image" aria-selected="false" aria-controls="image">Image</button>
    <button type="button" role="tab" id="tab-batch" aria-selected="false" aria-controls="batch">Batch</button>
    <button type="button" role="tab" id="tab-templates" aria-selected="false" aria-controls="templates">Templates</button>
  </div>
  <section id="single" class="workspace" role="tabpanel" aria-labelledby="tab-single">
    <div class="form">
      <fieldset class="source">
        <legend>Source</legend>
        <label><input type="radio" name="source" value="html" checked> HTML</label>
        <label><input type="radio" name="source" value="markdown"> Markdown</label>
        <label><input type="radio" name="source" value="url"> URL</label>
        <label><input type="radio" name="source" value="template"> Stored template</label>
        <textarea id="html" rows="9" spellcheck="false" aria-label="HTML"></textarea>
        <textarea id="markdown" rows="9" spellcheck="false" aria-label="Markdown" hidden></textarea>
        <input id="url" type="url" placeholder="e.g. https://example.com/report" aria-label="URL" hidden>
        <div id="template-source" hidden>
          <label for="single-template">Template</label>
          <select id="single-template"><option value="">Paste your key above to list your templates</option></select>
          <label for="single-data">Data (JSON, checked against the template's schema)</label>
          <textarea id="single-data" rows="6" spellcheck="false" placeholder='e.g. { "customer": { "name": "Ada" } }'></textarea>
        </div>
      </fieldset>
      <div id="options-panel">
        <div id="common-options" class="options"><p class="loading">Loading the options…</p></div>
        <details id="more-options">
          <summary>More options</summary>
          <div id="options" class="options"></div>
        </details>
      </div>
      <button type="button" id="generate" class="primary">Generate</button>
    </div>
    <div class="output">
      <div id="single-result" class="result" aria-live="polite"><p class="hint">The PDF appears here, page by page.</p></div>
      <div id="preview" class="pages" hidden></div>
    </div>
  </section>
  <section id="image" class="workspace" role="tabpanel" aria-labelledby="tab-image" hidden>
    <div class="form">
      <fieldset class="source">
        <legend>Source</legend>
        <label><input type="radio" name="image-source" value="html" checked> HTML</label>
        <label><input type="radio" name="image-source" value="markdown"> Markdown</label>
        <label><input type="radio" name="image-source" value="url"> URL</label>
        <textarea id="image-document" rows="9" spellcheck="false" aria-label="Document"></textarea>
      </fieldset>
      <div class="options">
        <label>Format <select id="image-format"><option>png</option><option>jpeg</option><option>webp</option></select></label>
        <label>Width <input id="image-width" type="number" min="1" max="16384" value="800"></label>
        <label>Height <input id="image-height" type="number" min="1" max="16384" value="600"></label>
        <label>Scale <input id="image-scale" type="number" min="0.1" max="4" step="0.5" value="1"></label>
        <label><input type="checkbox" id="image-full-page"> Full page</label>
      </div>
      <button type="button" id="generate-image" class="primary">Take the picture</button>
    </div>
    <div class="output">
      <div id="image-result" class="result" aria-live="polite"><p class="hint">The picture appears here: POST /v1/image/generate, stored and charged as one document.</p></div>
      <img id="image-preview" alt="The picture" hidden>
    </div>
  </section>
  <section id="batch" role="tabpanel" aria-labelledby="tab-batch" hidden>
    <p>One document per item. The options above apply to every item; an item's own options (JSON) win over them, option by option.</p>
    <div id="items"></div>
    <button type="button" id="add-item">Add an item</button>
    <label><input type="checkbox" id="merge"> Also merge them into one PDF</label>
    <button type="button" id="run-batch" class="primary">Generate the batch</button>
    <div id="batch-result" class="result" aria-live="polite"></div>
  </section>
  <section id="templates" role="tabpanel" aria-labelledby="tab-templates" hidden>
    <div class="template-bar">
      <label for="template-pick">Template</label>
      <select id="template-pick"><option value="">New template</option></select>
      <button type="button" id="template-refresh">Refresh the list</button>
      <button type="button" id="template-example">Start from the invoice example</button>
    </div>
    <div class="template-workspace">
      <div class="template-editor">
        <label for="template-name">Name</label>
        <input id="template-name" type="text" spellcheck="false" maxlength="200">
        <div class="template-version">
          <label for="template-version">Version</label>
          <select id="template-version" disabled></select>
          <span id="template-status">Not saved yet</span>
        </div>
        <label for="template-html">HTML (Liquid: <code>{{ customer.name }}</code>, <code>{% for line in lines %}</code>, filters)</label>
        <textarea id="template-html" rows="16" spellcheck="false"></textarea>
        <details>
          <summary>Header and footer</summary>
          <label for="template-header">Header HTML</label>
          <textarea id="template-header" rows="3" spellcheck="false"></textarea>
          <label for="template-footer">Footer HTML (<code>{{pageNumber}}</code> and <code>{{totalPages}}</code> still work)</label>
          <textarea id="template-footer" rows="3" spellcheck="false"></textarea>
        </details>
        <label for="template-data">Sample data (JSON: what the preview renders with, saved as the template's sample_data)</label>
        <textarea id="template-data" rows="10" spellcheck="false"></textarea>
        <details>
          <summary>Data schema and options</summary>
          <label for="template-schema">data_schema (JSON Schema; empty for none)</label>
          <textarea id="template-schema" rows="6" spellcheck="false"></textarea>
          <label for="template-options">options (the template's default document options, JSON; empty for none)</label>
          <textarea id="template-options" rows="3" spellcheck="false"></textarea>
        </details>
        <div class="actions">
          <button type="button" id="template-preview" class="primary">Preview</button>
          <button type="button" id="template-save">Save as a new version</button>
        </div>
        <div id="template-result" class="result" aria-live="polite"></div>
      </div>
      <div class="template-output">
        <div id="template-frame" class="pages" hidden></div>
        <p id="template-frame-empty">The preview appears here: save the template, then press Preview.</p>
      </div>
    </div>
  </section>
</main>
</body>
</html>`;
  // The PDF is fetched through its download link, which redirects to the storage's presigned URL:
  // that origin, and nothing else beyond our own, may be read. A template's preview answers the PDF
  // itself, from the API. Either is drawn page by page by pdf.js (our own copy, its worker from this
  // origin too), so it shows in any browser, one without a PDF viewer (headless) included; a blob:
  // of the bytes is what the "open" link points at.
  const storage = await downloadOrigin(pdfStore());
  return page(
    html,
    csp({
      'script-src': "'self'",
      'style-src': "'self'",
      'img-src': "'self' data: blob:",
      'connect-src': `'self' ${storage}`,
      'worker-src': "'self'",
    }),
  );
}

/**
 * An allow-listed file: compressed as the browser accepts, with an ETag; a browser that has it gets
 * a 304 (lib/site/asset-encoding.ts). It may be cached for 5 minutes, then is asked for again with
 * If-None-Match, so a deploy reaches browsers within minutes and an unchanged file costs no bytes.
 */
async function asset(name: string, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  if (!Object.hasOwn(SITE_ASSETS, name)) throw notFound(`No asset named ${JSON.stringify(name.slice(0, 100))}.`);
  const known = name as SiteAssetName;
  let file = cache.get(known);
  if (!file) {
    file = new EncodedFile(await readAsset(known));
    cache.set(known, file);
  }
  const coding = pickCoding(header(event, 'accept-encoding'));
  const caching = { 'Cache-Control': 'public, max-age=300', Vary: 'Accept-Encoding', ...COMMON_HEADERS };
  if (file.matches(header(event, 'if-none-match'))) return { statusCode: 304, headers: { ETag: file.etag(coding), ...caching }, body: '' };
  const body = await file.body(coding);
  return {
    statusCode: 200,
    headers: { 'Content-Type': SITE_ASSETS[known].type, ETag: body.etag, ...(coding !== 'identity' && { 'Content-Encoding': coding }), ...caching },
    // Binary either way (API Gateway decodes it: every type is a binary media type, lib/api/routes.ts).
    body: body.bytes.toString('base64'),
    isBase64Encoded: true,
  };
}

/** The page or asset a request to the site function asks for. */
export async function sitePage(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  switch (event.resource) {
    case '/docs':
      return docsPage(publicBaseUrl(event));
    case '/':
      return playgroundPage(publicBaseUrl(event));
    case '/assets/{name}':
      return asset(event.pathParameters?.name ?? '', event);
    default:
      throw notFound(`No page at ${event.path}.`);
  }
}
