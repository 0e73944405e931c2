/**
 * lib/documents/merge.ts on its own: the incremental writer makes a PDF that readers open, page by
 * page in order, and storeMergedPdf keeps to the size limit (before reading anything) and to its time.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinPdfs, MergedPdfWriter, MergeRefusedError, storeMergedPdf } from '#lib/documents/merge.ts';
import { mergePool } from '#lib/documents/pdf-workers.ts';
import type { PdfRecord, PdfStore } from '#lib/storage/pdfs.ts';
import { settings } from '#lib/settings.ts';
import { readPdfFacts } from '../support/pdf.ts';

async function pdfOf(label: string, pages: number, size: [number, number] = [300, 400]): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (let p = 1; p <= pages; p++) document.addPage(size).drawText(`${label} ${p}`, { x: 20, y: 50, size: 14, font });
  return document.save();
}

const recordOf = (n: number, fields: Partial<PdfRecord> = {}): PdfRecord =>
  ({ id: `pdf_${n}`, keyId: 'key', objectKey: `7d/pdf_${n}.pdf`, size: 1_000, pages: 1, format: 'A4', generationTimeMs: 1, createdAt: '', expiresAt: '', ...fields }) as PdfRecord;

/** A store whose S3 answers every GetObject with `file` after `delayMs`, honouring the abort signal, and records what was sent. */
function slowStore(file: Uint8Array, delayMs: number) {
  const sent: string[] = [];
  const s3 = {
    send: (command: object, options: { abortSignal?: AbortSignal } = {}) => {
      sent.push(command.constructor.name);
      if (!(command instanceof GetObjectCommand)) return Promise.resolve({});
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve({ Body: { transformToByteArray: async () => file } }), delayMs);
        options.abortSignal?.addEventListener('abort', () => (clearTimeout(timer), reject(new Error('aborted'))), { once: true });
      });
    },
  };
  return { store: { s3, dynamo: { send: async () => ({}) }, tableName: 't', bucketName: 'b' } as unknown as PdfStore, sent };
}

describe('joining PDFs', () => {
  it('writes every page of every file in order, each keeping its size, as pdf.js and pdf-lib read it', async () => {
    // Act
    const joined = await joinPdfs([await pdfOf('First', 1), await pdfOf('Second', 2, [612, 792]), await pdfOf('Third', 3)]);

    // Assess
    const facts = await readPdfFacts(joined);
    expect(facts.pageTexts.map((text) => text.trim())).toEqual(['First 1', 'Second 1', 'Second 2', 'Third 1', 'Third 2', 'Third 3']);
    expect(facts.pageSizes[1]).toEqual({ width: 612, height: 792 });
    expect(facts.pageSizes[5]).toEqual({ width: 300, height: 400 });
    expect((await PDFDocument.load(joined)).getPageCount()).toBe(6);
  });

  it('stops with MERGE_TOO_LARGE as soon as what it wrote passes its limit', async () => {
    // Prepare
    const file = await pdfOf('Page', 2);
    const measure = new MergedPdfWriter(async () => undefined);
    await measure.append(file);
    const writer = new MergedPdfWriter(async () => undefined, { maxBytes: measure.size * 2.5 });
    await writer.append(file);
    await writer.append(file);

    // Act, Assess
    await expect(writer.append(file)).rejects.toMatchObject({ code: 'MERGE_TOO_LARGE' });
  });
});

describe('storing a merged PDF', () => {
  // The items are joined in a merge worker (lib/documents/pdf-workers.ts): one loaded already, as in
  // a process that has served a merge, so that the times below are the reading's, not a worker's load.
  beforeAll(() => mergePool().use('warm-up', async () => undefined));
  afterAll(() => mergePool().close());

  it('refuses items larger together than one PDF may be with MERGE_TOO_LARGE, before reading any', async () => {
    // Prepare
    const { store, sent } = slowStore(await pdfOf('Page', 1), 0);
    const half = Math.ceil(settings.maxPdfBytes / 2);

    // Act
    const refused = storeMergedPdf(store, { keyId: 'key', tier: 'pro' }, [recordOf(1, { size: half }), recordOf(2, { size: half }), recordOf(3, { size: 1 })]);

    // Assess
    await expect(refused).rejects.toBeInstanceOf(MergeRefusedError);
    await expect(refused).rejects.toMatchObject({ code: 'MERGE_TOO_LARGE' });
    expect(sent).toEqual([]);
  });

  it('gives up with MERGE_TIMEOUT when its time runs out while reading, storing nothing', async () => {
    // Prepare: each item takes 200 ms to read; the merge has 300 ms.
    const { store, sent } = slowStore(await pdfOf('Page', 1), 200);
    const started = performance.now();

    // Act
    const refused = storeMergedPdf(store, { keyId: 'key', tier: 'pro' }, [1, 2, 3, 4, 5].map((n) => recordOf(n)), { signal: AbortSignal.timeout(300) });

    // Assess: it stopped at the deadline, in the middle of reading the second item, and wrote nothing.
    await expect(refused).rejects.toMatchObject({ code: 'MERGE_TIMEOUT' });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(sent.filter((name) => name === GetObjectCommand.name)).toHaveLength(2);
    expect(sent).not.toContain(PutObjectCommand.name);
  });

  it('gives up with MERGE_TIMEOUT at once when no time is left', async () => {
    // Prepare
    const { store, sent } = slowStore(await pdfOf('Page', 1), 0);

    // Act, Assess
    await expect(storeMergedPdf(store, { keyId: 'key', tier: 'pro' }, [recordOf(1)], { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'MERGE_TIMEOUT' });
    expect(sent).toEqual([]);
  });
});
