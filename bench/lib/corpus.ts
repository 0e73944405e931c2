/**
 * The fixed corpus (bench/corpus/*.html) and the API options each document is sent with. The floor
 * renders the same HTML with the very PDF options the service derives from those API options, so
 * both make the same PDF and differ only in what surrounds Chromium.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface CorpusDocument {
  /** Short name used in tables and results. */
  readonly name: string;
  readonly description: string;
  readonly html: string;
  /** Options as the API takes them (spec 4.1 body fields other than html/url). */
  readonly options: Readonly<Record<string, unknown>>;
  /** Pages every renderer must produce; a PDF with another count means a broken measurement. */
  readonly expectedPages: number;
}

const CORPUS_DIR = fileURLToPath(new URL('../corpus/', import.meta.url));
const load = (file: string) => readFileSync(CORPUS_DIR + file, 'utf8');

export const CORPUS: readonly CorpusDocument[] = [
  {
    name: 'letter',
    description: '1-page business letter (Letter, 1 in margins)',
    html: load('letter.html'),
    options: { format: 'Letter', margin: '1in' },
    expectedPages: 1,
  },
  {
    name: 'invoice',
    description: '2-page invoice with a 40-row table (A4)',
    html: load('invoice.html'),
    options: { format: 'A4', margin: { top: '15mm', right: '12mm', bottom: '15mm', left: '12mm' } },
    expectedPages: 2,
  },
  {
    name: 'report',
    description: '20-page report, header and footer, PNG and SVG data: URI images (A4)',
    html: load('report.html'),
    options: {
      format: 'A4',
      margin: { top: '22mm', right: '18mm', bottom: '22mm', left: '18mm' },
      header_html: '<div style="font-size:8px;color:#666">Annual Operations Report 2026 · Confidential</div>',
      footer_html: '<div style="font-size:8px;color:#666;text-align:right;width:100%">Page {{pageNumber}} of {{totalPages}}</div>',
    },
    expectedPages: 20,
  },
  {
    name: 'js-dashboard',
    description: 'dashboard whose table and SVG chart are built by script at load (A4)',
    html: load('dashboard.html'),
    options: { format: 'A4', margin: '12mm' },
    expectedPages: 4,
  },
];

export function corpusDocument(name: string): CorpusDocument {
  const document = CORPUS.find((candidate) => candidate.name === name);
  if (!document) throw new Error(`No corpus document named ${name}`);
  return document;
}

/** The document the throughput comparisons (floor, batch, naive, CLIs) are made with. */
export const THROUGHPUT_DOCUMENT = 'invoice';
