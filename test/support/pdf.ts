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

/** What a PDF reader shows of a file beyond its pages: document info, XMP, bookmarks, permissions. */
export interface PdfDocumentFacts {
  readonly pageCount: number;
  /** Each page's text, items joined by spaces. */
  readonly pageTexts: string[];
  /** Each page's size in points. */
  readonly pageSizes: { width: number; height: number }[];
  readonly info: Record<string, unknown>;
  /** XMP properties by name (dc:title, pdf:keywords...), when the file has XMP. */
  readonly xmp: Record<string, unknown> | undefined;
  /** Bookmark titles, depth first, indented by two spaces per level. */
  readonly outline: string[];
  /** pdf.js permission flags when the file restricts any, else null. */
  readonly permissions: number[] | null;
}

/** Reads a PDF as pdf.js (Firefox's reader) opens it, with a password when it needs one. */
export async function readPdfFacts(bytes: Uint8Array, password?: string): Promise<PdfDocumentFacts> {
  const document = await getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, verbosity: 0, ...(password !== undefined && { password }) }).promise;
  try {
    const pageTexts: string[] = [];
    const pageSizes: { width: number; height: number }[] = [];
    for (let number = 1; number <= document.numPages; number++) {
      const page = await document.getPage(number);
      const content = await page.getTextContent();
      pageTexts.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
      const [x0, y0, x1, y1] = page.view as [number, number, number, number];
      pageSizes.push({ width: x1 - x0, height: y1 - y0 });
    }
    const { info, metadata } = await document.getMetadata();
    const outline: string[] = [];
    const walk = (items: { title: string; items: unknown[] }[] | null, depth: number) => {
      for (const item of items ?? []) {
        outline.push('  '.repeat(depth) + item.title);
        walk(item.items as { title: string; items: unknown[] }[], depth + 1);
      }
    };
    walk((await document.getOutline()) as { title: string; items: unknown[] }[] | null, 0);
    return {
      pageCount: document.numPages,
      pageTexts,
      pageSizes,
      info: info as Record<string, unknown>,
      xmp: metadata ? Object.fromEntries([...metadata]) : undefined,
      outline,
      permissions: await document.getPermissions(),
    };
  } finally {
    await document.destroy();
  }
}
