/**
 * When a page is ready to print, as customers meet it through the local stack and real Chromium:
 * documents that draw after load (chart libraries, Paged.js, CSS animations) print what Chrome's
 * print preview shows once they are done; the readiness options (shared/spec/beyond.md) wait for
 * what the caller names; resources that never settle cost a bounded time, never the document.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createKey, expectApiError, generate, generateAndDownload, post, quotaUsed, type TestKey } from '../support/api.ts';
import { readPdf } from '../support/pdf.ts';
import { inkIn, rasterizePage } from '../support/raster.ts';

/** A file of an installed package, by its path inside the package (not every dist file is exported). */
const library = (pkg: string, path: string) => readFileSync(fileURLToPath(new URL(`../../node_modules/${pkg}/${path}`, import.meta.url)), 'utf8');
const publicSite = inject('publicSite');

let key: TestKey;

beforeAll(async () => {
  key = await createKey('pro');
});

describe('documents that draw after load print finished, with no option', () => {
  it('a Chart.js bar chart (animated, as by default) prints its bars in full', async () => {
    // Prepare: four bars in one colour; Chart.js animates them in over a second with requestAnimationFrame.
    const html = `<!doctype html><html><body style="margin:0">
      <div style="width:600px;height:300px"><canvas id="c"></canvas></div>
      <script>${library('chart.js', 'dist/chart.umd.js')}</script>
      <script>new Chart(document.getElementById('c'), { type: 'bar', options: { plugins: { legend: { display: false } } },
        data: { labels: ['Q1', 'Q2', 'Q3', 'Q4'], datasets: [{ data: [8, 8, 8, 8], backgroundColor: '#ff0000' }] } });</script>
      </body></html>`;

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { html, margin: '0' });

    // Assess: the chart area (600 x 300 CSS px = 450 x 225 pt) is largely red: full-height bars.
    const page = await rasterizePage(bytes, 1, 1);
    const chart = inkIn(page, { x: 30, y: 10, width: 410, height: 200 });
    expect(chart.colored).toBeGreaterThan(0.35);
  });

  it('a Paged.js book prints every page the polyfill lays out, with its page counters', async () => {
    // Prepare: five chapters, each starting a page, numbered in a margin box by Paged.js.
    const chapters = Array.from({ length: 5 }, (_, i) => `<section class="chapter"><h1>Chapter ${i + 1}</h1><p>Text of chapter ${i + 1}.</p></section>`).join('');
    const html = `<!doctype html><html><head><style>
      @page { size: A5; margin: 20mm; @bottom-center { content: "Folio " counter(page) " / " counter(pages); } }
      .chapter { break-before: page; }
      </style><script>${library('pagedjs', 'dist/paged.polyfill.js')}</script></head><body>${chapters}</body></html>`;

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { html });

    // Assess
    const pdf = await readPdf(bytes);
    expect(pdf.pageCount).toBeGreaterThanOrEqual(5);
    expect(pdf.text).toContain('Chapter 5');
    expect(pdf.text).toContain(`Folio ${pdf.pageCount} / ${pdf.pageCount}`);
  });

  it('a CSS fade-in of a document without scripts prints at its end, not at its first frame', async () => {
    // Prepare: text that starts invisible and fades in over two seconds.
    const html = `<!doctype html><style>@keyframes appear { from { opacity: 0 } to { opacity: 1 } }
      h1 { animation: appear 2s ease-in forwards; font-size: 72px; margin: 0; color: #000 }</style><h1>Faded in</h1>`;

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { html, margin: '0' });

    // Assess: the heading is inked (opacity 0 would print nothing, though its text is in the file).
    const page = await rasterizePage(bytes, 1, 1);
    expect(inkIn(page, { x: 0, y: 0, width: 400, height: 70 }).coverage).toBeGreaterThan(0.05);
  });
});

describe('readiness options', () => {
  const lateContent = (delayMs: number, markup: string) =>
    `<!doctype html><p>Report</p><div id="slot"></div><script>
      setTimeout(() => { document.getElementById('slot').innerHTML = ${JSON.stringify(markup)}; window.reportReady = true; }, ${delayMs});
    </script>`;

  it('wait_for_selector prints once the element is there and visible', async () => {
    // Act
    const { bytes } = await generateAndDownload(key.apiKey, {
      html: lateContent(1200, '<p id="done">Figures are in</p>'),
      wait_for_selector: '#done',
    });

    // Assess
    expect((await readPdf(bytes)).text).toContain('Figures are in');
  });

  it('wait_for_expression prints once the expression is true, even if it threw at first', async () => {
    // Act: window.report is undefined until the page sets it, so the expression throws until then.
    const { bytes } = await generateAndDownload(key.apiKey, {
      html: lateContent(1200, '<p>Expression met</p>').replace('window.reportReady = true;', 'window.report = { ready: true };'),
      wait_for_expression: 'window.report.ready === true',
    });

    // Assess
    expect((await readPdf(bytes)).text).toContain('Expression met');
  });

  it('wait_delay_ms waits that long after everything else', async () => {
    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { html: lateContent(1000, '<p>After the delay</p>'), wait_delay_ms: 1500 });

    // Assess
    expect((await readPdf(bytes)).text).toContain('After the delay');
  });

  it('emulate_media chooses the style sheet the document is laid out with', async () => {
    // Prepare
    const html = `<!doctype html><style>@media print { .screen { display: none } } @media screen { .print { display: none } }</style>
      <p class="print">Print layout</p><p class="screen">Screen layout</p>`;

    // Act
    const printed = await generateAndDownload(key.apiKey, { html });
    const onScreen = await generateAndDownload(key.apiKey, { html, emulate_media: 'screen' });

    // Assess
    const printText = (await readPdf(printed.bytes)).text;
    const screenText = (await readPdf(onScreen.bytes)).text;
    expect(printText).toContain('Print layout');
    expect(printText).not.toContain('Screen layout');
    expect(screenText).toContain('Screen layout');
    expect(screenText).not.toContain('Print layout');
  });

  it('a selector that never matches is 504 render_timeout naming it, and costs nothing', async () => {
    // Prepare
    const before = await quotaUsed(key);

    // Act
    const response = await generate(key.apiKey, { html: '<p>No chart here</p>', wait_for_selector: '#chart-ready' });

    // Assess
    const message = expectApiError(response, 504, 'render_timeout');
    expect(message).toContain('wait_for_selector "#chart-ready"');
    expect(await quotaUsed(key)).toBe(before);
  });

  it('an expression that never becomes true is 504 render_timeout naming it', async () => {
    // Act
    const response = await generate(key.apiKey, { html: '<p>Waiting</p>', wait_for_expression: 'window.neverSet === true' });

    // Assess
    expect(expectApiError(response, 504, 'render_timeout')).toContain('wait_for_expression "window.neverSet === true"');
  });

  it('a selector or an expression that cannot be evaluated is 400 invalid_request naming the field', async () => {
    // Act
    const badSelector = await generate(key.apiKey, { html: '<p>x</p>', wait_for_selector: 'div[' });
    const badExpression = await generate(key.apiKey, { html: '<p>x</p>', wait_for_expression: 'window.ready ===' });

    // Assess
    expect(expectApiError(badSelector, 400, 'invalid_request')).toMatch(/^wait_for_selector/);
    expect(expectApiError(badExpression, 400, 'invalid_request')).toMatch(/^wait_for_expression/);
  });

  it('a delay that cannot fit in the time limit is 504 render_timeout naming wait_delay_ms', async () => {
    // Act (the test stack's render limit is 5 s; the option allows up to 10 s)
    const response = await generate(key.apiKey, { html: '<p>x</p>', wait_delay_ms: 10_000 });

    // Assess
    expect(expectApiError(response, 504, 'render_timeout')).toContain('wait_delay_ms');
  });

  it('batch items take the same options, and fail per item with the same rules', async () => {
    // Act
    const response = await post(
      '/v1/pdf/batch',
      {
        pdfs: [
          { html: lateContent(800, '<p id="done">Batch figures</p>'), options: { wait_for_selector: '#done' } },
          { html: '<p>x</p>', options: { wait_delay_ms: -5 } },
          { html: '<p>x</p>', options: { wait_for_selector: '#never' } },
        ],
      },
      key.apiKey,
    );

    // Assess
    expect(response.status).toBe(200);
    const [ready, invalid, never] = response.body.results;
    expect(ready.success).toBe(true);
    expect(invalid).toMatchObject({ success: false, error: { code: 'INVALID_OPTIONS' } });
    expect(invalid.error.message).toContain('wait_delay_ms');
    expect(never).toMatchObject({ success: false, error: { code: 'RENDER_TIMEOUT' } });
    expect(never.error.message).toContain('#never');
  });
});

describe('resources that never settle cost a bounded time of their own, not the document', () => {
  it.each([
    ['an SVG sprite the egress guard refuses (http)', '<svg width="20" height="20"><use href="http://10.0.0.1/sprite.svg#icon"/></svg>'],
    ['an SVG sprite the egress guard refuses (https)', '<svg width="20" height="20"><use href="https://10.0.0.1/sprite.svg#icon"/></svg>'],
    ['an image whose server never answers', `<img src="${publicSite}/hang" width="20" height="20">`],
    ['a style sheet that streams forever', `<link rel="stylesheet" href="${publicSite}/endless">`],
    ['a style sheet whose server never answers', `<link rel="stylesheet" href="${publicSite}/hang">`],
  ])('%s: the document prints without it instead of timing out', async (_what, resource) => {
    // Act (waiting for the resource would take the whole time limit: a 504)
    const { bytes } = await generateAndDownload(key.apiKey, { html: `<!doctype html><p>Printed regardless</p>${resource}` });

    // Assess
    expect((await readPdf(bytes)).text).toContain('Printed regardless');
  });

  it('a scripted document waiting for network idle, with an image that never answers, prints too', async () => {
    // Act
    const { bytes } = await generateAndDownload(key.apiKey, {
      html: `<!doctype html><p>Scripted and stalled</p><img src="${publicSite}/hang"><script>document.title = 'x';</script>`,
      wait_for: 'networkidle0',
    });

    // Assess
    expect((await readPdf(bytes)).text).toContain('Scripted and stalled');
  });
});
