/**
 * CSS paged media that documents rely on: @page size and margins (and how they meet the API's
 * `format` and `margin`), page breaks, table headers repeated on every page, lazy images, and
 * headers and footers that stay in their margin.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createKey, generateAndDownload, requestsReceivedBy, type TestKey } from '../support/api.ts';
import { findItem, POINTS_PER_MM, readPdf } from '../support/pdf.ts';
import { inkIn, rasterizePage } from '../support/raster.ts';

const A4 = { width: 210 * POINTS_PER_MM, height: 297 * POINTS_PER_MM };
const A5 = { width: 148 * POINTS_PER_MM, height: 210 * POINTS_PER_MM };
/** Chromium lays pages out in whole CSS pixels: sizes and margins may be off by up to one (0.75 pt). */
const closeTo = (actual: number | undefined, expected: number) => expect(Math.abs((actual ?? NaN) - expected)).toBeLessThanOrEqual(1);

describe('CSS paged media', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('pro');
  });

  describe('@page size and the format option', () => {
    const A5_LANDSCAPE_DOCUMENT = '<!doctype html><style>@page { size: A5 landscape }</style><p>Postcard</p>';

    it('uses the size the document declares when the caller gives no format', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: A5_LANDSCAPE_DOCUMENT });
      const pdf = await readPdf(bytes);

      // Assess
      closeTo(pdf.pages[0]?.width, A5.height);
      closeTo(pdf.pages[0]?.height, A5.width);
    });

    it('uses A4 when neither the caller nor the document gives a size', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: '<!doctype html><p>Plain</p>' });
      const pdf = await readPdf(bytes);

      // Assess
      closeTo(pdf.pages[0]?.width, A4.width);
      closeTo(pdf.pages[0]?.height, A4.height);
    });

    it('keeps the size the document declares over a format the caller gives, as Chrome\'s print dialog does', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: A5_LANDSCAPE_DOCUMENT, format: 'Letter' });
      const pdf = await readPdf(bytes);

      // Assess: prefer_css_page_size is on by default (its false case: test/integration/document-options.test.ts)
      closeTo(pdf.pages[0]?.width, A5.height);
      closeTo(pdf.pages[0]?.height, A5.width);
    });

    it('turns the default A4 to landscape with the orientation option when the document declares no size', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: '<!doctype html><p>Wide</p>', orientation: 'landscape' });
      const pdf = await readPdf(bytes);

      // Assess
      closeTo(pdf.pages[0]?.width, A4.height);
    });
  });

  describe('@page margins', () => {
    const html = '<!doctype html><style>@page { margin: 30mm } body { margin: 0 }</style><p style="margin:0">Inside the margins</p>';

    it('places content inside the margins the document declares', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html });
      const pdf = await readPdf(bytes);

      // Assess
      const item = findItem(pdf.pages[0], 'Inside the margins');
      closeTo(item.x, 30 * POINTS_PER_MM);
    });

    it('keeps the document\'s @page margins over the margin option (Chromium gives the document precedence)', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html, margin: '10mm' });
      const pdf = await readPdf(bytes);

      // Assess
      closeTo(findItem(pdf.pages[0], 'Inside the margins').x, 30 * POINTS_PER_MM);
    });

    it('uses the margin option when the document declares no @page margin', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, {
        html: '<!doctype html><style>body { margin: 0 }</style><p style="margin:0">Option margins</p>',
        margin: '10mm',
      });
      const pdf = await readPdf(bytes);

      // Assess
      closeTo(findItem(pdf.pages[0], 'Option margins').x, 10 * POINTS_PER_MM);
    });
  });

  describe('page breaks', () => {
    it('starts a new page at break-before: page and after break-after: page', async () => {
      // Prepare
      const html = `<!doctype html>
        <p>First page</p>
        <p style="break-before: page">Second page</p>
        <p style="break-after: page">Still second page</p>
        <p>Third page</p>`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html });
      const pdf = await readPdf(bytes);

      // Assess
      expect(pdf.pageCount).toBe(3);
      expect(pdf.pages.map((page) => page.text)).toEqual(['First page', 'Second page Still second page', 'Third page']);
    });

    it('moves a block with break-inside: avoid to the next page instead of splitting it', async () => {
      // Prepare: the block would start near the bottom of page 1
      const block = (avoid: boolean) => `<!doctype html><style>body { margin: 0 }</style>
        <div style="height: 950px">Spacer</div>
        <div style="${avoid ? 'break-inside: avoid;' : ''}height: 300px; display: flex; flex-direction: column; justify-content: space-between">
          <span>BLOCK START</span><span>BLOCK END</span>
        </div>`;

      // Act
      const split = await readPdf((await generateAndDownload(key.apiKey, { html: block(false) })).bytes);
      const kept = await readPdf((await generateAndDownload(key.apiKey, { html: block(true) })).bytes);

      // Assess: without the rule the block is split; with it, both ends are on page 2
      expect(split.pages[0]?.text).toContain('BLOCK START');
      expect(split.pages[1]?.text).toContain('BLOCK END');
      expect(kept.pages[0]?.text).not.toContain('BLOCK START');
      expect(kept.pages[1]?.text).toContain('BLOCK START');
      expect(kept.pages[1]?.text).toContain('BLOCK END');
    });
  });

  it('repeats a table\'s header row at the top of every page the table spans', async () => {
    // Prepare
    const rows = Array.from({ length: 120 }, (_, i) => `<tr><td>Item ${i + 1}</td><td>${i + 1}</td></tr>`).join('');
    const html = `<!doctype html><table><thead><tr><th>Description</th><th>Quantity</th></tr></thead><tbody>${rows}</tbody></table>`;

    // Act
    const { bytes } = await generateAndDownload(key.apiKey, { html });
    const pdf = await readPdf(bytes);

    // Assess
    expect(pdf.pageCount).toBeGreaterThanOrEqual(3);
    for (const page of pdf.pages) {
      expect(page.text.startsWith('Description Quantity'), page.text.slice(0, 60)).toBe(true);
    }
    expect(pdf.text).toContain('Item 120');
  });

  describe('images with loading="lazy"', () => {
    const image = () => `<img loading="lazy" src="${inject('publicSite')}/red-square.svg" width="200" height="200" alt="">`;

    it('prints a lazy image far below the first screen', async () => {
      // Prepare: 2500 px of text first, so the image is well outside the 800 px viewport
      const html = `<!doctype html><style>body { margin: 0 }</style><div style="height: 2500px">Top</div>${image()}`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html });
      const pdf = await readPdf(bytes);
      const raster = await rasterizePage(bytes, pdf.pageCount, 1);

      // Assess: the red square is on the last page
      expect(inkIn(raster, { x: 0, y: 0, width: raster.width, height: raster.height }).colored).toBeGreaterThan(0.01);
    });
  });

  describe('CSS background images', () => {
    const square = (query: string) =>
      `<!doctype html><style>body { margin: 0 } .logo { width: 200px; height: 200px; background: url(${inject('publicSite')}/red-square.svg?${query}) }</style><div class="logo"></div><p>Letterhead</p>`;

    it.each([
      ['a static document', 'static', ''],
      ['a document with a script', 'scripted', '<script>document.title = "scripted"</script>'],
    ])('prints a slow CSS background image from a URL in %s', async (_name, query, script) => {
      // Prepare: the image answers after 600 ms
      const html = square(query) + script;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html });
      const raster = await rasterizePage(bytes, 1, 1);

      // Assess: the square (200 px = 150 pt, at the top left corner: no margin by default) is red
      expect(inkIn(raster, { x: 10, y: 10, width: 130, height: 130 }).colored).toBeGreaterThan(0.95);
    });

    it('prints a CSS background from a data: URL in a self-contained document', async () => {
      // Prepare: nothing to fetch, so the document renders on a page that draws no screen frames
      const redSquare = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><rect width="100" height="100" fill="#ff0000"/></svg>')}`;
      const html = `<!doctype html><style>body { margin: 0 } .logo { width: 200px; height: 200px; background: url("${redSquare}") }</style><div class="logo"></div><p>Letterhead</p>`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html });
      const raster = await rasterizePage(bytes, 1, 1);

      // Assess
      expect(inkIn(raster, { x: 10, y: 10, width: 130, height: 130 }).colored).toBeGreaterThan(0.95);
    });
  });

  describe('headers and footers stay in their margin', () => {
    const body = '<!doctype html><style>body { margin: 0 }</style><div style="height: 100%">BODY TEXT</div>';

    it.each([
      ['fixed positioning', '<div style="position:fixed;top:400px;left:0">ESCAPED</div>'],
      ['absolute positioning', '<div style="position:absolute;top:400px;left:0">ESCAPED</div>'],
      ['a transform', '<div style="transform:translateY(400px)">ESCAPED</div>'],
      ['a huge top margin', '<div style="margin-top:400px">ESCAPED</div>'],
      ['a style sheet that moves Chromium\'s own header box', '<style>#header, body, html { position: fixed !important; top: 400px !important }</style><div>ESCAPED</div>'],
      ['a style sheet that restyles the margin box', '<style>div { contain: none !important; overflow: visible !important; max-height: none !important; transform: translateY(400px) !important }</style><div>ESCAPED</div>'],
    ])('keeps a header inside the top margin despite %s', async (_name, header) => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: body, header_html: header, margin: { top: '25mm' } });
      const pdf = await readPdf(bytes);

      // Assess: nothing of the header is printed below the top margin (pdf.js y is from the bottom)
      const topMarginBottom = pdf.pages[0]!.height - 25 * POINTS_PER_MM;
      const escaped = pdf.pages[0]!.items.filter((item) => item.str.includes('ESCAPED'));
      for (const item of escaped) expect(item.y).toBeGreaterThan(topMarginBottom);
      expect(pdf.pages[0]!.text).toContain('BODY TEXT');
    });

    it('drops scripts and event handlers from templates', async () => {
      // Prepare
      const header =
        '<span id="a">SAFE</span><script>document.getElementById("a").textContent = "SCRIPT RAN"</script>' +
        '<img src="data:," onerror="document.getElementById(\'a\').textContent = \'HANDLER RAN\'">';

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: body, header_html: header });
      const pdf = await readPdf(bytes);

      // Assess
      expect(pdf.text).toContain('SAFE');
      expect(pdf.text).not.toContain('RAN');
    });

    it('never fetches an external image a template refers to', async () => {
      // Prepare
      const site = inject('publicSite');
      const header = `<img src="${site}/red-square.svg?from=template" width="20" height="20"> Logo`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: body, header_html: header });
      const received = await requestsReceivedBy(site);

      // Assess
      expect(received).not.toContain('/red-square.svg?from=template');
      expect((await readPdf(bytes)).text).toContain('Logo');
    });

    it('prints a data: URL image (a logo) in a header', async () => {
      // Prepare
      const svg = encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="#ff0000"/></svg>');
      const header = `<img src="data:image/svg+xml,${svg}" width="40" height="40">`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: body, header_html: header, margin: { top: '30mm' } });
      const raster = await rasterizePage(bytes, 1, 1);

      // Assess: red in the top margin
      expect(inkIn(raster, { x: 0, y: 0, width: 200, height: 30 * POINTS_PER_MM }).colored).toBeGreaterThan(0.01);
    });
  });
});
