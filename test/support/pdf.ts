/**
 * Reading PDFs the way a customer would check them: structure with pdf-lib, text and drawing
 * operations with pdf.js. Nothing here trusts the code that made the PDF.
 */
import { PDFDocument } from 'pdf-lib';
import { getDocument, OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';

export interface PdfTextItem {
  readonly str: string;
  readonly fontSize: number;
  readonly x: number;
  readonly y: number;
  readonly width: number;
}

export interface PdfPage {
  /** Page size in PDF points (1/72 inch). */
  readonly width: number;
  readonly height: number;
  /** The page's text, items joined by spaces. */
  readonly text: string;
  /** Text items with their font size in points, their baseline origin and their advance width, in points from the bottom left. */
  readonly items: PdfTextItem[];
  /** Every fill colour the page sets, as lower-case #rrggbb. */
  readonly fillColors: string[];
}

export interface ReadPdf {
  readonly pageCount: number;
  readonly pages: PdfPage[];
  readonly text: string;
}

export const POINTS_PER_INCH = 72;
export const POINTS_PER_MM = 72 / 25.4;

/** Text with every run of white space (including the joins between items) collapsed to one space. */
export function normalizeText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The first text item on a page that contains `needle`; fails loudly when there is none. */
export function findItem(page: PdfPage | undefined, needle: string): PdfTextItem {
  const item = page?.items.find((candidate) => candidate.str.includes(needle));
  if (!item) throw new Error(`no text item contains "${needle}"; page text: ${page?.text ?? '(no page)'}`);
  return item;
}

export async function readPdf(bytes: Uint8Array): Promise<ReadPdf> {
  const structure = await PDFDocument.load(bytes);
  const document = await getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, verbosity: 0 }).promise;
  const pages: PdfPage[] = [];
  for (let number = 1; number <= document.numPages; number++) {
    const page = await document.getPage(number);
    const content = await page.getTextContent();
    const items = content.items
      .filter((item): item is Extract<typeof item, { str: string }> => 'str' in item && item.str.trim() !== '')
      .map((item) => ({
        str: item.str,
        fontSize: Math.hypot(item.transform[0], item.transform[1]),
        x: item.transform[4],
        y: item.transform[5],
        width: item.width,
      }));
    const operators = await page.getOperatorList();
    const fillColors: string[] = [];
    operators.fnArray.forEach((fn, i) => {
      if (fn !== OPS.setFillRGBColor) return;
      const args = operators.argsArray[i] as unknown[];
      const color = typeof args[0] === 'string' ? args[0] : '#' + (args as number[]).map((c) => c.toString(16).padStart(2, '0')).join('');
      fillColors.push(color.toLowerCase());
    });
    const { width, height } = structure.getPage(number - 1).getSize();
    pages.push({ width, height, text: items.map((item) => item.str).join(' '), items, fillColors });
  }
  await document.destroy();
  return { pageCount: structure.getPageCount(), pages, text: pages.map((page) => page.text).join('\n') };
}
