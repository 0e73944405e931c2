/**
 * Makes the stored pictures of test/unit/fidelity-rasterizers.test.ts (test/fidelity/fixtures/thumbnails/):
 * the corpus's two-page invoice with the default watermark printed by the service's renderer in this
 * process, its first page drawn by our thumbnail code (pdf.js in Chromium) and by `pdftoppm`, and the
 * defects the comparison must catch drawn by our thumbnail code: the watermark missing, the page's
 * margins 2 mm wider, the second page instead of the first. (webfonts-magazine-*.png are the pictures
 * an `npm run fidelity` run wrote, the case with the most differing pixels of the fidelity cases.)
 *
 *   npx node test/fidelity/make-thumbnail-fixtures.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { renderLimits } from '#lib/documents/produce-pdf.ts';
import { inspectHtml } from '#lib/render/html.ts';
import { renderPdf } from '#lib/render/render.ts';
import { pictureFirstPage } from '#lib/render/thumbnail.ts';
import { shutDownRendering } from '#lib/render/workspaces.ts';
import { loadCases } from './cases.ts';
import { serviceOptions } from './reference.ts';

const OUT = new URL('./fixtures/thumbnails/', import.meta.url).pathname;
const WIDTH = 400;
const limits = renderLimits({ timeoutMs: 60_000 });
const [invoice] = await loadCases('business-invoice-2-pages');
const scratch = mkdtempSync(join(tmpdir(), 'thumbnail-fixtures-'));

async function print(html: string, options: Record<string, unknown>): Promise<Uint8Array> {
  const traits = inspectHtml(html);
  if (traits.problem !== undefined) throw new Error(traits.problem);
  return (await renderPdf({ html, ...traits }, serviceOptions(options), limits)).bytes;
}

async function thumbnail(pdf: Uint8Array, name: string): Promise<{ width: number; height: number }> {
  const picture = await pictureFirstPage(pdf, { width: WIDTH, format: 'png' }, limits, limits.timeoutMs);
  writeFileSync(join(OUT, `${name}.png`), picture.bytes);
  return picture;
}

try {
  const watermarked = { ...invoice!.options, watermark: { text: 'DRAFT' } };
  const pdf = await print(invoice!.html, watermarked);
  const size = await thumbnail(pdf, 'invoice-thumbnail');
  writeFileSync(join(scratch, 'invoice.pdf'), pdf);
  execFileSync('pdftoppm', ['-png', '-f', '1', '-l', '1', '-scale-to-x', String(size.width), '-scale-to-y', String(size.height), '-singlefile', join(scratch, 'invoice.pdf'), join(OUT, 'invoice-pdftoppm')]);
  await thumbnail(await print(invoice!.html, invoice!.options ?? {}), 'invoice-thumbnail-no-watermark');
  const wider = invoice!.html.replace('margin: 16mm 15mm 20mm;', 'margin: 18mm 17mm 20mm;');
  if (wider === invoice!.html) throw new Error("the invoice's @page margin is no longer 16mm 15mm 20mm: update the margin defect");
  await thumbnail(await print(wider, watermarked), 'invoice-thumbnail-margin');
  const fromPageTwo = await PDFDocument.load(pdf);
  fromPageTwo.removePage(0);
  await thumbnail(await fromPageTwo.save(), 'invoice-thumbnail-page-2');
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await shutDownRendering();
}
