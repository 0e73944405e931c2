/**
 * Every option of POST /v1/pdf/generate, checked on the PDF a customer downloads: page sizes in
 * points, positions and sizes of text, fill colours and the header and footer text.
 */
import { PDFDict, PDFDocument, PDFName } from 'pdf-lib';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createKey, generate, generateAndDownload, type TestKey } from '../support/api.ts';
import { findItem, normalizeText, POINTS_PER_INCH, POINTS_PER_MM, readPdf } from '../support/pdf.ts';

/** Paper sizes in points from their definitions (ISO 216 in mm, ANSI in inches), not from the code. */
const PAPER_POINTS = {
  A3: { width: 297 * POINTS_PER_MM, height: 420 * POINTS_PER_MM },
  A4: { width: 210 * POINTS_PER_MM, height: 297 * POINTS_PER_MM },
  A5: { width: 148 * POINTS_PER_MM, height: 210 * POINTS_PER_MM },
  Letter: { width: 8.5 * POINTS_PER_INCH, height: 11 * POINTS_PER_INCH },
  Legal: { width: 8.5 * POINTS_PER_INCH, height: 14 * POINTS_PER_INCH },
  Tabloid: { width: 11 * POINTS_PER_INCH, height: 17 * POINTS_PER_INCH },
} as const;
const SIZE_TOLERANCE_PT = 2;

/** A document whose only text sits at the very top left of the printable area. */
const MARKER_DOC = '<!doctype html><style>html,body{margin:0;padding:0}p{margin:0;font-size:16px}</style><p>Marker text</p>';

describe('POST /v1/pdf/generate options', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('enterprise');
  });

  describe('format', () => {
    it.each(Object.entries(PAPER_POINTS))('%s gives a page of the right size in points and is echoed', async (format, size) => {
      // Prepare
      const html = `<!doctype html><p>Format ${format}</p>`;

      // Act
      const { record, bytes } = await generateAndDownload(key.apiKey, { html, format });

      // Assess
      const pdf = await readPdf(bytes);
      expect(record.format).toBe(format);
      expect(Math.abs((pdf.pages[0]?.width ?? 0) - size.width)).toBeLessThanOrEqual(SIZE_TOLERANCE_PT);
      expect(Math.abs((pdf.pages[0]?.height ?? 0) - size.height)).toBeLessThanOrEqual(SIZE_TOLERANCE_PT);
      expect(pdf.text).toContain(`Format ${format}`);
    });

    it('defaults to an A4 portrait page and says so in the record', async () => {
      // Prepare
      const html = '<!doctype html><p>No options at all</p>';

      // Act
      const { record, bytes } = await generateAndDownload(key.apiKey, { html });

      // Assess
      const page = (await readPdf(bytes)).pages[0];
      expect(record.format).toBe('A4');
      expect(Math.abs((page?.width ?? 0) - PAPER_POINTS.A4.width)).toBeLessThanOrEqual(SIZE_TOLERANCE_PT);
      expect(Math.abs((page?.height ?? 0) - PAPER_POINTS.A4.height)).toBeLessThanOrEqual(SIZE_TOLERANCE_PT);
    });
  });

  describe('orientation', () => {
    it.each(['A4', 'Letter'] as const)('landscape swaps the width and height of %s, portrait keeps them', async (format) => {
      // Prepare
      const html = '<!doctype html><p>Which way up</p>';

      // Act
      const landscape = await generateAndDownload(key.apiKey, { html, format, orientation: 'landscape' });
      const portrait = await generateAndDownload(key.apiKey, { html, format, orientation: 'portrait' });

      // Assess
      const wide = (await readPdf(landscape.bytes)).pages[0];
      const tall = (await readPdf(portrait.bytes)).pages[0];
      expect(Math.abs((wide?.width ?? 0) - PAPER_POINTS[format].height)).toBeLessThanOrEqual(SIZE_TOLERANCE_PT);
      expect(Math.abs((wide?.height ?? 0) - PAPER_POINTS[format].width)).toBeLessThanOrEqual(SIZE_TOLERANCE_PT);
      expect(Math.abs((tall?.width ?? 0) - PAPER_POINTS[format].width)).toBeLessThanOrEqual(SIZE_TOLERANCE_PT);
      expect(Math.abs((tall?.height ?? 0) - PAPER_POINTS[format].height)).toBeLessThanOrEqual(SIZE_TOLERANCE_PT);
      expect(landscape.record.format).toBe(format);
    });
  });

  describe('margin', () => {
    it('a single string moves the content in from the left and the top by that length', async () => {
      // Prepare
      const without = await generateAndDownload(key.apiKey, { html: MARKER_DOC, margin: '0' });

      // Act
      const withMargin = await generateAndDownload(key.apiKey, { html: MARKER_DOC, margin: '1in' });

      // Assess
      const base = findItem((await readPdf(without.bytes)).pages[0], 'Marker');
      const moved = findItem((await readPdf(withMargin.bytes)).pages[0], 'Marker');
      expect(moved.x - base.x).toBeCloseTo(POINTS_PER_INCH, 0);
      // PDF y grows upwards: a top margin pushes the text down the page.
      expect(base.y - moved.y).toBeCloseTo(POINTS_PER_INCH, 0);
      expect(moved.x).toBeCloseTo(POINTS_PER_INCH, 0);
    });

    it('an object sets each side on its own: left and top move the text by their own lengths', async () => {
      // Prepare
      const without = await generateAndDownload(key.apiKey, { html: MARKER_DOC, margin: { top: '0', left: '0' } });

      // Act
      const withMargin = await generateAndDownload(key.apiKey, { html: MARKER_DOC, margin: { top: '50mm', left: '30mm' } });

      // Assess
      const base = findItem((await readPdf(without.bytes)).pages[0], 'Marker');
      const moved = findItem((await readPdf(withMargin.bytes)).pages[0], 'Marker');
      expect(Math.abs(moved.x - base.x - 30 * POINTS_PER_MM)).toBeLessThan(1);
      expect(Math.abs(base.y - moved.y - 50 * POINTS_PER_MM)).toBeLessThan(1);
    });

    it('an object right margin moves right-aligned text in from the right edge', async () => {
      // Prepare
      const html =
        '<!doctype html><style>html,body{margin:0}p{margin:0;font-size:16px;text-align:right}</style><p>Right edge</p>';

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html, margin: { right: '40mm' } });

      // Assess
      const page = (await readPdf(bytes)).pages[0];
      const item = findItem(page, 'Right edge');
      const gapToRightEdge = (page?.width ?? 0) - (item.x + item.width);
      expect(Math.abs(gapToRightEdge - 40 * POINTS_PER_MM)).toBeLessThan(2);
    });

    it('an object bottom margin shortens the printable area, pushing text to the next page', async () => {
      // Prepare: a block just short of a full A4 page (1123 CSS px), then a line of text.
      const html =
        '<!doctype html><style>html,body{margin:0}p{margin:0;font-size:16px}</style>' +
        '<div style="height:1040px"></div><p>Bottom line</p>';

      // Act
      const without = await generateAndDownload(key.apiKey, { html, margin: { bottom: '0' } });
      const withMargin = await generateAndDownload(key.apiKey, { html, margin: { bottom: '40mm' } });

      // Assess
      const fits = await readPdf(without.bytes);
      const pushed = await readPdf(withMargin.bytes);
      expect(fits.pageCount).toBe(1);
      expect(fits.pages[0]?.text).toContain('Bottom line');
      expect(pushed.pageCount).toBe(2);
      expect(withMargin.record.pages).toBe(2);
      expect(pushed.pages[1]?.text).toContain('Bottom line');
    });
  });

  describe('print_background', () => {
    const html =
      '<!doctype html><div style="background-color:#12ab34;width:300px;height:200px">Green box</div>';

    it('true prints the background colour', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html, print_background: true });

      // Assess
      const page = (await readPdf(bytes)).pages[0];
      expect(page?.fillColors).toContain('#12ab34');
      expect(page?.text).toContain('Green box');
    });

    it('false leaves the background out but keeps the text', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html, print_background: false });

      // Assess
      const page = (await readPdf(bytes)).pages[0];
      expect(page?.fillColors).not.toContain('#12ab34');
      expect(page?.text).toContain('Green box');
    });

    it('defaults to printing backgrounds', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html });

      // Assess
      expect((await readPdf(bytes)).pages[0]?.fillColors).toContain('#12ab34');
    });
  });

  describe('tagged', () => {
    const html = '<!doctype html><html lang="en"><h1>Quarterly report</h1><p>Revenue grew.</p><table><tr><th>Q</th><td>4</td></tr></table></html>';

    /** What a PDF reader uses to tell a tagged PDF: a structure tree and the catalog's MarkInfo /Marked true. */
    async function structure(bytes: Uint8Array) {
      const catalog = (await PDFDocument.load(bytes)).catalog;
      const markInfo = catalog.lookupMaybe(PDFName.of('MarkInfo'), PDFDict);
      return {
        structTree: catalog.has(PDFName.of('StructTreeRoot')),
        marked: markInfo?.get(PDFName.of('Marked'))?.toString() === 'true',
      };
    }

    it('defaults to a tagged PDF, as Chrome prints: a structure tree that screen readers follow', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html });

      // Assess
      expect(await structure(bytes)).toEqual({ structTree: true, marked: true });
      expect(normalizeText((await readPdf(bytes)).text)).toBe('Quarterly report Revenue grew. Q 4');
    });

    it('false gives an untagged PDF with the same text', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html, tagged: false });

      // Assess
      expect(await structure(bytes)).toEqual({ structTree: false, marked: false });
      expect(normalizeText((await readPdf(bytes)).text)).toBe('Quarterly report Revenue grew. Q 4');
    });
  });

  describe('scale', () => {
    it('0.5 and 2 shrink and grow the text in proportion to scale 1', async () => {
      // Prepare
      const html = '<!doctype html><p style="font-size:20px">Scaled words</p>';

      // Act
      const [half, normal, double] = await Promise.all(
        [0.5, 1, 2].map((scale) => generateAndDownload(key.apiKey, { html, scale })),
      );

      // Assess
      const sizeOf = async (bytes: Uint8Array) => findItem((await readPdf(bytes)).pages[0], 'Scaled').fontSize;
      const [halfSize, normalSize, doubleSize] = [await sizeOf(half!.bytes), await sizeOf(normal!.bytes), await sizeOf(double!.bytes)];
      expect(normalSize).toBeCloseTo(15, 0); // 20 CSS px = 15 pt
      expect(halfSize / normalSize).toBeCloseTo(0.5, 2);
      expect(doubleSize / normalSize).toBeCloseTo(2, 2);
    });

    it('accepts the bounds 0.1 and 2 of the documented range', async () => {
      // Act
      const low = await generate(key.apiKey, { html: '<p>Low</p>', scale: 0.1 });
      const high = await generate(key.apiKey, { html: '<p>High</p>', scale: 2 });

      // Assess
      expect(low.status).toBe(200);
      expect(high.status).toBe(200);
    });
  });

  describe('wait_for', () => {
    it.each(['load', 'domcontentloaded', 'networkidle0', 'networkidle2'])('"%s" is accepted and prints the document', async (waitFor) => {
      // Prepare
      const html = `<!doctype html><p>Waited for ${waitFor}</p>`;

      // Act
      const { record, bytes } = await generateAndDownload(key.apiKey, { html, wait_for: waitFor });

      // Assess
      expect(record.pages).toBe(1);
      expect((await readPdf(bytes)).text).toContain(`Waited for ${waitFor}`);
    });

    it('networkidle0 captures content that a page fetches after it has loaded', async () => {
      // Prepare
      const url = `${inject('publicSite')}/late-content`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { url, wait_for: 'networkidle0' });

      // Assess
      const text = (await readPdf(bytes)).text;
      expect(text).toContain('Data arrived after a delayed fetch');
      expect(text).not.toContain('Loading');
    });

    it('domcontentloaded prints the page as soon as it is parsed, before the delayed fetch', async () => {
      // Prepare
      const url = `${inject('publicSite')}/late-content`;

      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { url, wait_for: 'domcontentloaded' });

      // Assess
      const text = (await readPdf(bytes)).text;
      expect(text).toContain('Loading');
      expect(text).not.toContain('Data arrived');
    });
  });

  describe('header_html and footer_html', () => {
    const threePages =
      '<!doctype html><p>First page body</p>' +
      '<p style="break-before:page">Second page body</p>' +
      '<p style="break-before:page">Third page body</p>';

    it('print page numbers, the page count and the UTC date on every page, readable, without any margin set', async () => {
      // Prepare
      const dayBefore = new Date().toISOString().slice(0, 10);

      // Act
      const { record, bytes } = await generateAndDownload(key.apiKey, {
        html: threePages,
        header_html: '<span>Page {{pageNumber}} of {{totalPages}}</span>',
        footer_html: '<span>Printed on {{date}}</span>',
      });

      // Assess
      const dayAfter = new Date().toISOString().slice(0, 10);
      const pdf = await readPdf(bytes);
      expect(record.pages).toBe(3);
      expect(pdf.pageCount).toBe(3);
      pdf.pages.forEach((page, index) => {
        const text = normalizeText(page.text);
        expect(text).toContain(`Page ${index + 1} of 3`);
        expect(text).toMatch(new RegExp(`Printed on (${dayBefore}|${dayAfter})`));
        for (const other of [1, 2, 3].filter((n) => n !== index + 1)) expect(text).not.toContain(`Page ${other} of 3`);
        expect(text).not.toContain('{{');
      });
      const first = pdf.pages[0]!;
      const header = findItem(first, 'Page');
      const footer = findItem(first, 'Printed');
      const body = findItem(first, 'First page body');
      expect(header.fontSize).toBeGreaterThanOrEqual(7);
      expect(footer.fontSize).toBeGreaterThanOrEqual(7);
      // The header sits above the body text, the footer in the bottom margin, both on the page.
      expect(header.y).toBeGreaterThan(body.y + body.fontSize);
      expect(header.y).toBeLessThan(first.height);
      expect(footer.y).toBeGreaterThan(0);
      expect(footer.y).toBeLessThan(30 * POINTS_PER_MM);
    });

    it('a footer alone numbers the pages and leaves no header text', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, {
        html: threePages,
        footer_html: '<div style="text-align:center">{{pageNumber}}/{{totalPages}}</div>',
      });

      // Assess
      const pdf = await readPdf(bytes);
      expect(pdf.pages.map((page) => normalizeText(page.text))).toEqual([
        expect.stringContaining('1/3'),
        expect.stringContaining('2/3'),
        expect.stringContaining('3/3'),
      ]);
      // Only the body text and the footer: Chromium's default header (title, URL) is not printed.
      expect(normalizeText(pdf.pages[1]!.text)).toBe('Second page body 2/3');
    });
  });
});
