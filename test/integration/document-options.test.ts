/**
 * The page and document options of shared/spec/beyond.md, on both endpoints, through the local
 * stack and real Chromium, checked by reading the PDFs a customer downloads: page sizes and counts,
 * bookmarks, the info dictionary and XMP, the watermark's text on every page, encryption as pdf.js
 * opens it, the download name S3 sends, and a merged batch.
 */
import { PDFDict, PDFDocument, PDFName } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, download, expectApiError, generate, generateAndDownload, post, request, quotaUsed, type TestKey } from '../support/api.ts';
import { POINTS_PER_INCH, readPdfFacts } from '../support/pdf.ts';
import { inkIn, rasterizePage } from '../support/raster.ts';

/** A document of `pages` pages, each saying its number. */
const pagesHtml = (pages: number, label = 'Page') =>
  '<!doctype html><meta charset="utf-8">' +
  Array.from({ length: pages }, (_, i) => `<p style="${i ? 'break-before:page' : ''}">${label} ${i + 1}</p>`).join('');

const A4 = { width: 595.92, height: 842.4 };
const LETTER = { width: 612, height: 792 };
const A5 = { width: 419.76, height: 595.44 };

function expectSize(actual: { width: number; height: number } | undefined, expected: { width: number; height: number }) {
  expect(actual?.width).toBeCloseTo(expected.width, 0);
  expect(actual?.height).toBeCloseTo(expected.height, 0);
}

/** The names of the fonts a PDF embeds (from their descriptors, which Type 3 fonts have too). */
async function fontNames(bytes: Uint8Array): Promise<string[]> {
  const document = await PDFDocument.load(bytes);
  return document.context
    .enumerateIndirectObjects()
    .flatMap(([, object]) => (object instanceof PDFDict && object.get(PDFName.of('Type')) === PDFName.of('FontDescriptor') ? [object.get(PDFName.of('FontName'))] : []))
    .flatMap((name) => (name instanceof PDFName ? [name.decodeText()] : []));
}

const batch = (key: TestKey, body: unknown) => post('/v1/pdf/batch', body, key.apiKey);

describe('page and document options', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await createKey('pro');
  });

  describe('width and height', () => {
    it('print on the caller\'s own page size, over any format, and echo format "custom"', async () => {
      // Act
      const { record, bytes } = await generateAndDownload(key.apiKey, { html: pagesHtml(1), width: '4in', height: '152.4mm', format: 'A3' });
      const pdf = await readPdfFacts(bytes);

      // Assess: a 4 x 6 inch label
      expectSize(pdf.pageSizes[0], { width: 4 * POINTS_PER_INCH, height: 6 * POINTS_PER_INCH });
      expect(record.format).toBe('custom');
    });

    it('are turned by orientation landscape, as Chromium turns any paper', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: pagesHtml(1), width: '4in', height: '6in', orientation: 'landscape' });

      // Assess
      expectSize((await readPdfFacts(bytes)).pageSizes[0], { width: 6 * POINTS_PER_INCH, height: 4 * POINTS_PER_INCH });
    });

    it.each([
      [{ width: '4in' }, /height/],
      [{ width: '4in', height: 'tall' }, /height/],
      [{ width: '0.1in', height: '6in' }, /width and height/],
      [{ width: '300in', height: '6in' }, /width and height/],
    ])('refuse %j with 400 naming the field, charging nothing', async (options, field) => {
      // Prepare
      const before = await quotaUsed(key);

      // Act
      const response = await generate(key.apiKey, { html: pagesHtml(1), ...options });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(field);
      expect(await quotaUsed(key)).toBe(before);
    });
  });

  describe('prefer_css_page_size', () => {
    const A5_LANDSCAPE_DOCUMENT = '<!doctype html><style>@page { size: A5 landscape }</style><p>Postcard</p>';

    it('by default lets the document\'s @page size win over format, as Chrome\'s print dialog does', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: A5_LANDSCAPE_DOCUMENT, format: 'Letter' });

      // Assess
      expectSize((await readPdfFacts(bytes)).pageSizes[0], { width: A5.height, height: A5.width });
    });

    it('false prints on the caller\'s format (the document keeps its orientation)', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: A5_LANDSCAPE_DOCUMENT, format: 'Letter', prefer_css_page_size: false });

      // Assess
      expectSize((await readPdfFacts(bytes)).pageSizes[0], { width: LETTER.height, height: LETTER.width });
    });
  });

  describe('page_ranges', () => {
    it('prints only the pages asked for, in document order, and counts them', async () => {
      // Act
      const { record, bytes } = await generateAndDownload(key.apiKey, { html: pagesHtml(6), page_ranges: '5, 2-3' });
      const pdf = await readPdfFacts(bytes);

      // Assess
      expect(pdf.pageTexts.map((text) => text.trim())).toEqual(['Page 2', 'Page 3', 'Page 5']);
      expect(record.pages).toBe(3);
    });

    it('keeps the document\'s page numbers in a footer, as Chrome\'s print preview does', async () => {
      // Act
      const footer_html = 'Folio <span class="pageNumber"></span> of <span class="totalPages"></span>';
      const { bytes } = await generateAndDownload(key.apiKey, { html: pagesHtml(6), page_ranges: '2-3', footer_html });

      // Assess
      const texts = (await readPdfFacts(bytes)).pageTexts.map((text) => text.replace(/\s+/g, ' ').trim());
      expect(texts).toEqual(['Page 2 Folio 2 of 6', 'Page 3 Folio 3 of 6']);
    });

    it('"4-" prints from page 4 to the end', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: pagesHtml(6), page_ranges: '4-' });

      // Assess
      expect((await readPdfFacts(bytes)).pageTexts.map((text) => text.trim())).toEqual(['Page 4', 'Page 5', 'Page 6']);
    });

    it.each([['1-3, 9'], ['8-'], ['7']])('refuses %j past the last page of a 6-page document with 400, charging and storing nothing', async (ranges) => {
      // Prepare
      const before = await quotaUsed(key);

      // Act
      const response = await generate(key.apiKey, { html: pagesHtml(6), page_ranges: ranges });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/page_ranges .*past the document's last page/);
      expect(await quotaUsed(key)).toBe(before);
    });

    it('refuses a range that is not one with 400 naming page_ranges', async () => {
      // Act
      const response = await generate(key.apiKey, { html: pagesHtml(2), page_ranges: '3-1' });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/^page_ranges/);
    });
  });

  describe('outline and tagged', () => {
    const REPORT =
      '<!doctype html><title>Report</title><h1>Annual report</h1><p>Intro</p><h2>Revenue</h2><p>Up</p>' +
      '<h2 style="break-before:page">Costs</h2><p>Down</p><h1>Appendix</h1>';

    it('outline true gives bookmarks from the headings, nested by level', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: REPORT, outline: true });

      // Assess
      expect((await readPdfFacts(bytes)).outline).toEqual(['Annual report', '  Revenue', '  Costs', 'Appendix']);
    });

    it('outline works on an untagged file too', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: REPORT, outline: true, tagged: false });

      // Assess
      expect((await readPdfFacts(bytes)).outline).toEqual(['Annual report', '  Revenue', '  Costs', 'Appendix']);
    });

    it('without outline the file has no bookmarks', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: REPORT });

      // Assess
      expect((await readPdfFacts(bytes)).outline).toEqual([]);
    });

    it('is tagged by default and untagged with tagged false', async () => {
      // Act
      const tagged = await generateAndDownload(key.apiKey, { html: REPORT });
      const untagged = await generateAndDownload(key.apiKey, { html: REPORT, tagged: false });

      // Assess: the structure tree screen readers use
      const structureTree = async (bytes: Uint8Array) => (await PDFDocument.load(bytes)).catalog.has(PDFName.of('StructTreeRoot'));
      expect(await structureTree(tagged.bytes)).toBe(true);
      expect(await structureTree(untagged.bytes)).toBe(false);
    });
  });

  describe('metadata_pdf', () => {
    it('writes title, author, subject, keywords and creator into the info dictionary and XMP, in any script', async () => {
      // Act
      const metadata_pdf = {
        title: 'விலைப்பட்டியல் 2026-118',
        author: 'Acme GmbH',
        subject: 'Invoice for November',
        keywords: ['invoice', 'acme', 'Q4 2026'],
        creator: 'Billing <v2> & co',
      };
      const { bytes, record } = await generateAndDownload(key.apiKey, { html: '<!doctype html><title>Page title</title><p>Invoice</p>', metadata_pdf });
      const pdf = await readPdfFacts(bytes);

      // Assess
      expect(pdf.info).toMatchObject({
        Title: metadata_pdf.title,
        Author: 'Acme GmbH',
        Subject: 'Invoice for November',
        Keywords: 'invoice, acme, Q4 2026',
        Creator: 'Billing <v2> & co',
      });
      expect(pdf.xmp).toMatchObject({ 'dc:title': metadata_pdf.title, 'dc:creator': ['Acme GmbH'], 'xmp:creatortool': 'Billing <v2> & co' });
      expect(pdf.pageTexts[0]).toContain('Invoice');
      expect(record.size).toBe(bytes.byteLength);
    });

    it('refuses an unknown field and a keyword that is not a string with 400 naming it', async () => {
      // Act
      const unknown = await generate(key.apiKey, { html: pagesHtml(1), metadata_pdf: { titel: 'x' } });
      const keyword = await generate(key.apiKey, { html: pagesHtml(1), metadata_pdf: { keywords: [1] } });

      // Assess
      expect(expectApiError(unknown, 400, 'invalid_request')).toMatch(/metadata_pdf.*titel/);
      expect(expectApiError(keyword, 400, 'invalid_request')).toMatch(/metadata_pdf.keywords/);
    });

    it.each([['\ud800x'], ['\uffff\ufffe']])('refuses a title %j that no PDF or XMP can hold with 400', async (title) => {
      // Act
      const response = await generate(key.apiKey, { html: pagesHtml(1), metadata_pdf: { title } });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/metadata_pdf.title must be well-formed/);
    });
  });

  describe('watermark', () => {
    it('puts its text on every page, over the content, which stays as it was', async () => {
      // Act
      const { bytes, record } = await generateAndDownload(key.apiKey, { html: pagesHtml(3, 'Chapter'), watermark: { text: 'CONFIDENTIAL' } });
      const pdf = await readPdfFacts(bytes);

      // Assess
      expect(pdf.pageCount).toBe(3);
      expect(record.pages).toBe(3);
      pdf.pageTexts.forEach((text, i) => {
        expect(text).toContain('CONFIDENTIAL');
        expect(text).toContain(`Chapter ${i + 1}`);
      });
      pdf.pageSizes.forEach((size) => expectSize(size, A4));
      // Still tagged: the document's structure survives, the watermark is outside it.
      expect((await PDFDocument.load(bytes)).catalog.has(PDFName.of('StructTreeRoot'))).toBe(true);
    });

    it('is as see-through as its opacity: faint by default, solid grey at 1, centred on the page', async () => {
      // Prepare: the darkest pixel of a page that holds nothing but the watermark
      const darkest = async (watermark: Record<string, unknown>) => {
        const { bytes } = await generateAndDownload(key.apiKey, { html: '<!doctype html><body></body>', watermark });
        const raster = await rasterizePage(bytes, 1, 1);
        let least = 255;
        for (let i = 0; i < raster.pixels.length; i += 4) least = Math.min(least, raster.pixels[i] as number);
        return { least, centre: inkIn(raster, { x: A4.width / 2 - 20, y: A4.height / 2 - 20, width: 40, height: 40 }) };
      };

      // Act
      const faint = await darkest({ text: 'XXXXXXXX' });
      const solid = await darkest({ text: 'XXXXXXXX', opacity: 1 });

      // Assess: grey 127 at 15 % over white is about 236; at 100 % it is 127
      expect(faint.least).toBeGreaterThan(215);
      expect(faint.least).toBeLessThan(250);
      expect(solid.least).toBeLessThan(150);
      expect(solid.centre.coverage).toBeGreaterThan(0.05);
    });

    it('draws text in any script with the bundled fonts, shaped by Chromium', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: pagesHtml(1), watermark: { text: 'ரகசியம்', opacity: 0.3, angle: -30 } });

      // Assess: the Tamil font drew it
      expect(await fontNames(bytes)).toContainEqual(expect.stringMatching(/^[A-Z]{6}\+NotoSansTamil/));
    });

    it.each([
      [{ text: '' }, /watermark.text/],
      [{ text: 'x'.repeat(201) }, /watermark.text/],
      [{ text: 'DRAFT', opacity: 0 }, /watermark.opacity/],
      [{ text: 'DRAFT', angle: 91 }, /watermark.angle/],
    ])('refuses %j with 400 naming the field', async (watermark, field) => {
      // Act
      const response = await generate(key.apiKey, { html: pagesHtml(1), watermark });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(field);
    });
  });

  describe('encryption', () => {
    it('AES-256: opens with the user password only, and copying is refused when not permitted', async () => {
      // Act
      const { bytes, record } = await generateAndDownload(key.apiKey, {
        html: pagesHtml(2, 'Salary'),
        encryption: { user_password: 'open sesame', owner_password: 'owner-secret', permissions: ['print'] },
      });

      // Assess: the standard security handler of PDF 2.0 with AES-256
      const raw = Buffer.from(bytes).toString('latin1');
      expect(raw).toMatch(/\/V 5\b/);
      expect(raw).toMatch(/\/R 6\b/);
      expect(raw).toMatch(/\/AESV3\b/);
      await expect(readPdfFacts(bytes)).rejects.toThrow(/password/i);
      await expect(readPdfFacts(bytes, 'wrong')).rejects.toThrow(/password/i);
      const opened = await readPdfFacts(bytes, 'open sesame');
      expect(opened.pageTexts.map((text) => text.trim())).toEqual(['Salary 1', 'Salary 2']);
      expect(record.pages).toBe(2);
      expect(record.size).toBe(bytes.byteLength);
      // pdf.js flags: 4 print, 16 copy (PermissionFlag)
      expect(opened.permissions).toContain(4);
      expect(opened.permissions).not.toContain(16);
    });

    it('without a user password opens freely and still holds the permissions', async () => {
      // Act
      const { bytes } = await generateAndDownload(key.apiKey, { html: pagesHtml(1), encryption: { owner_password: 'owner-secret', permissions: ['copy'] } });
      const opened = await readPdfFacts(bytes);

      // Assess
      expect(opened.pageTexts[0]).toContain('Page 1');
      expect(opened.permissions).toContain(16);
      expect(opened.permissions).not.toContain(4);
    });

    it.each([
      [{ user_password: 'a' }, /owner_password/],
      [{ owner_password: 'same-secret', user_password: 'same-secret' }, /owner_password must differ/],
      [{ owner_password: 'owner-secret', permissions: ['fly'] }, /encryption.permissions/],
      [{ owner_password: 'x'.repeat(128) }, /owner_password/],
      // qpdf reads a password as a C string: a NUL would cut it there and open the file to anyone.
      [{ owner_password: 'owner-secret', user_password: '\u0000secret' }, /encryption.user_password must not contain control characters/],
      [{ owner_password: 'x\u0000', user_password: 'x\u0000y' }, /encryption.(owner|user)_password must not contain control characters/],
      [{ owner_password: '\ud800' }, /encryption.owner_password must be well-formed/],
    ])('refuses %j with 400 naming the field', async (encryption, field) => {
      // Act
      const response = await generate(key.apiKey, { html: pagesHtml(1), encryption });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(field);
    });
  });

  describe('filename', () => {
    /** Follows the download link one step and returns the headers S3 answers the file with. */
    async function fileHeaders(link: string): Promise<Headers> {
      const redirect = await request('GET', link);
      expect(redirect.status).toBe(302);
      const file = await fetch(redirect.headers.get('location') as string);
      await file.arrayBuffer();
      return file.headers;
    }

    it('is the name the download saves under, encoded for names beyond ASCII (RFC 6266)', async () => {
      // Act
      const { body } = await generate(key.apiKey, { html: pagesHtml(1), filename: 'Rechnung März 2026' });
      const headers = await fileHeaders(body.url);

      // Assess
      expect(body.filename).toBe('Rechnung März 2026.pdf');
      expect(headers.get('content-disposition')).toBe(`attachment; filename="Rechnung M?rz 2026.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz%202026.pdf`);
      expect(headers.get('content-type')).toBe('application/pdf');
    });

    it('defaults to the PDF\'s id', async () => {
      // Act
      const { body } = await generate(key.apiKey, { html: pagesHtml(1) });

      // Assess
      expect(body.filename).toBe(`${body.id}.pdf`);
      expect((await fileHeaders(body.url)).get('content-disposition')).toBe(`attachment; filename=${body.id}.pdf`);
    });

    it.each([['../etc/passwd'], ['a\\b.pdf'], [''], ['x'.repeat(201)], ['line\nbreak'], ['\ud800bad']])('refuses %j with 400 naming filename', async (filename) => {
      // Act
      const response = await generate(key.apiKey, { html: pagesHtml(1), filename });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/^filename/);
    });
  });

  describe('on a batch item', () => {
    it('honours every page and document option, and refuses bad ones per item', async () => {
      // Act
      const response = await batch(key, {
        pdfs: [
          { html: pagesHtml(4), options: { width: '5in', height: '5in', page_ranges: '2-3', outline: true, filename: 'square' } },
          { html: pagesHtml(2), options: { metadata_pdf: { title: 'Batch title' }, watermark: { text: 'DRAFT' }, prefer_css_page_size: false, tagged: false } },
          { html: pagesHtml(1), options: { encryption: { user_password: 'u', owner_password: 'owner-secret' } } },
          { html: pagesHtml(2), options: { page_ranges: '3' } },
          { html: pagesHtml(1), options: { watermark: { text: '' } } },
        ],
      });

      // Assess
      expect(response.status).toBe(200);
      const [square, titled, locked, pastEnd, badWatermark] = response.body.results;
      const squarePdf = await readPdfFacts(await download(square.download_url));
      expect(squarePdf.pageTexts.map((text) => text.trim())).toEqual(['Page 2', 'Page 3']);
      expectSize(squarePdf.pageSizes[0], { width: 360, height: 360 });
      expect(square.pages).toBe(2);
      expect((await request('GET', `/v1/pdf/${square.pdf_id}`, { apiKey: key.apiKey })).body.filename).toBe('square.pdf');
      const titledPdf = await readPdfFacts(await download(titled.download_url));
      expect(titledPdf.info.Title).toBe('Batch title');
      expect(titledPdf.pageTexts.every((text) => text.includes('DRAFT'))).toBe(true);
      await expect(readPdfFacts(await download(locked.download_url))).rejects.toThrow(/password/i);
      expect((await readPdfFacts(await download(locked.download_url), 'u')).pageTexts[0]).toContain('Page 1');
      expect(pastEnd).toMatchObject({ success: false, error: { code: 'INVALID_OPTIONS' } });
      expect(pastEnd.error.message).toMatch(/page_ranges/);
      expect(badWatermark).toMatchObject({ success: false, error: { code: 'INVALID_OPTIONS' } });
      expect(response.body).not.toHaveProperty('merged');
    });
  });

  describe('merge', () => {
    it('joins the items that succeeded, in input order, into one more PDF, charging the items only', async () => {
      // Prepare
      const mergeKey = await createKey('pro');

      // Act
      const response = await batch(mergeKey, {
        merge: true,
        pdfs: [
          { html: pagesHtml(1, 'First') },
          { html: '<p>broken' + '<!--', options: {} },
          { html: pagesHtml(2, 'Second'), options: { format: 'Letter' } },
          { html: pagesHtml(3, 'Third'), options: { watermark: { text: 'COPY' } } },
        ],
      });

      // Assess
      expect(response.status).toBe(200);
      const { results, merged } = response.body;
      expect(results.map((result: { success: boolean }) => result.success)).toEqual([true, false, true, true]);
      const pages = results.filter((result: { success: boolean }) => result.success).reduce((sum: number, result: { pages: number }) => sum + result.pages, 0);
      expect(merged.pages).toBe(pages);
      expect(merged.format).toBe('mixed');
      const pdf = await readPdfFacts(await download(merged.url));
      expect(pdf.pageCount).toBe(6);
      expect(pdf.pageTexts.map((text) => text.replace('COPY', '').trim())).toEqual(['First 1', 'Second 1', 'Second 2', 'Third 1', 'Third 2', 'Third 3']);
      expectSize(pdf.pageSizes[1], LETTER);
      expect(merged.size).toBe((await download(merged.url)).byteLength);
      expect(await quotaUsed(mergeKey)).toBe(3);
      // The merged file is the caller's like any other: it has a record.
      const record = await request('GET', `/v1/pdf/${merged.id}`, { apiKey: mergeKey.apiKey });
      expect(record.status).toBe(200);
    });

    it('is null with merge_error TOO_MANY_PAGES when the items together pass the page limit, the items stored and charged', async () => {
      // Prepare: the test stack allows 50 pages per PDF
      const longKey = await createKey('pro');

      // Act
      const response = await batch(longKey, { merge: true, pdfs: [{ html: pagesHtml(30) }, { html: pagesHtml(30) }] });

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.merged).toBeNull();
      expect(response.body.merge_error).toMatchObject({ code: 'TOO_MANY_PAGES' });
      expect(response.body.successful).toBe(2);
      expect(await quotaUsed(longKey)).toBe(2);
    });

    it('is null when no item succeeded', async () => {
      // Act
      const response = await batch(key, { merge: true, pdfs: [{ html: '' }] });

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.merged).toBeNull();
    });

    it('refuses encrypted items with 400 before anything is charged', async () => {
      // Prepare
      const before = await quotaUsed(key);

      // Act
      const response = await batch(key, { merge: true, pdfs: [{ html: pagesHtml(1), options: { encryption: { owner_password: 'owner-secret' } } }] });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/encryption.*merge/);
      expect(await quotaUsed(key)).toBe(before);
    });

    it('refuses a merge that is not a boolean with 400', async () => {
      // Act
      const response = await batch(key, { merge: 'yes', pdfs: [{ html: pagesHtml(1) }] });

      // Assess
      expect(expectApiError(response, 400, 'invalid_request')).toMatch(/merge/);
    });
  });
});
