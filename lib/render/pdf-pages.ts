/**
 * The page count of a PDF that Chromium (Skia) just wrote, read from the file itself in well under a
 * millisecond: trailer -> /Root -> /Pages -> /Count, following the cross-reference table's offsets
 * so that text inside the document (a title, say) can never be mistaken for structure. Anything
 * unexpected falls back to a full parse with pdf-lib, which costs 10 to 50 ms per document.
 */
import { PDFDocument } from 'pdf-lib';

function objectAt(text: string, offsets: number[], id: number): string | undefined {
  const start = offsets[id];
  if (start === undefined) return undefined;
  const end = text.indexOf('endobj', start);
  if (end < 0 || !text.startsWith(`${id} 0 obj`, start)) return undefined;
  return text.slice(start, end);
}

/** The count from the structure, or undefined when the file is not laid out as expected. */
export function readPageCount(pdf: Uint8Array): number | undefined {
  const text = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).toString('latin1');
  const startxref = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(text.slice(-64));
  if (!startxref) return undefined;
  const xrefStart = Number(startxref[1]);
  const header = /^xref\s+0 (\d+)\s*\n/.exec(text.slice(xrefStart, xrefStart + 64));
  if (!header) return undefined;
  const count = Number(header[1]);
  const tableStart = xrefStart + header[0].length;
  const offsets: number[] = [];
  for (let id = 0; id < count; id++) {
    const entry = text.slice(tableStart + id * 20, tableStart + id * 20 + 18);
    offsets.push(entry.endsWith('n') ? Number(entry.slice(0, 10)) : Number.NaN);
  }
  const trailer = text.slice(tableStart + count * 20, xrefStart + header[0].length + count * 20 + 512);
  const root = /\/Root (\d+) 0 R/.exec(trailer);
  const catalog = root && objectAt(text, offsets, Number(root[1]));
  const pagesRef = catalog && /\/Pages (\d+) 0 R/.exec(catalog);
  const pages = pagesRef && objectAt(text, offsets, Number(pagesRef[1]));
  const total = pages && /\/Count (\d+)/.exec(pages);
  return total ? Number(total[1]) : undefined;
}

export async function countPages(pdf: Uint8Array): Promise<number> {
  return readPageCount(pdf) ?? (await PDFDocument.load(pdf, { updateMetadata: false })).getPageCount();
}
