/** Checking that what a renderer produced is a real PDF, so failures are never benchmarked. */
import { PDFDocument } from 'pdf-lib';

/** The PDF's page count; throws when the bytes are not a PDF or it has no page. */
export async function pageCount(bytes: Uint8Array): Promise<number> {
  const pages = (await PDFDocument.load(bytes, { updateMetadata: false })).getPageCount();
  if (pages < 1) throw new Error('the PDF has no page');
  return pages;
}

/**
 * Checks a PDF's page count against what the corpus expects. A different count is reported, not
 * thrown: fonts or Chromium versions can move a page break, and that is worth seeing but does not
 * make the timing meaningless. Zero pages or unreadable bytes do throw.
 */
export async function checkPdf(bytes: Uint8Array, expectedPages: number, what: string, mismatches: string[]): Promise<number> {
  const pages = await pageCount(bytes);
  if (pages !== expectedPages) {
    const note = `${what}: ${pages} pages, expected ${expectedPages}`;
    if (!mismatches.includes(note)) mismatches.push(note);
  }
  return pages;
}
