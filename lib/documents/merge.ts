/**
 * A batch's merged file (shared/spec/beyond.md, "Batch: one merged file"): the items' PDFs joined
 * in input order into one more stored PDF, made from the stored files (never printed again).
 *
 * The merged file is made of PDFs already charged, so it costs nothing: its record names no quota
 * reservation (lib/accounts/quota.ts counts records by reservation). Pages are copied whole, with
 * their links; what belongs to each file rather than to its pages (the tags' structure tree, the
 * bookmarks, the info dictionary) does not survive joining, so a merged file is untagged: the
 * items' own files keep theirs.
 *
 * Limits (issue #29, item 2): a merged file obeys the page limit and the size limit every PDF does,
 * both decided from the items' records before any file is read, and it must be made in the time the
 * request has left (a synchronous batch answers inside API Gateway's 29 s). Memory stays a small
 * multiple of one item, whatever the number of items: each item is read, parsed, and its pages'
 * objects written out to a file on disk, one item at a time (MergedPdfWriter), and the finished file
 * is streamed from disk to S3. Nothing is ever turned into a string.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFContext, PDFDocument, PDFName, PDFObjectCopier, PDFRef } from 'pdf-lib';
import type { ApiKey } from '#lib/accounts/keys.ts';
import { TIERS } from '#lib/accounts/tiers.ts';
import { describePdf, putPdfObject, putPdfRecord, readPdfObject, type PdfRecord, type PdfStore } from '#lib/storage/pdfs.ts';
import { newPdfId } from './produce-pdf.ts';
import { settings } from '#lib/settings.ts';

/** Why a merged file could not be made (lib/documents/batch.ts MERGE_ERRORS); the items are stored and charged regardless. */
export type MergeRefusal = 'TOO_MANY_PAGES' | 'MERGE_TOO_LARGE' | 'MERGE_TIMEOUT';

/** The merged file would break a limit, or could not be made in time. */
export class MergeRefusedError extends Error {
  override readonly name = 'MergeRefusedError';
  readonly code: MergeRefusal;
  constructor(code: MergeRefusal, message: string) {
    super(message);
    this.code = code;
  }
}

const tooLong = (pages: number, maxPages: number) =>
  new MergeRefusedError('TOO_MANY_PAGES', `The items have ${pages} pages together, more than the maximum of ${maxPages} for one PDF; each item is stored on its own.`);
const tooLarge = (bytes: number, maxBytes: number) =>
  new MergeRefusedError('MERGE_TOO_LARGE', `The items are ${bytes} bytes together, more than the maximum of ${maxBytes} for one PDF; each item is stored on its own.`);
const outOfTime = () =>
  new MergeRefusedError(
    'MERGE_TIMEOUT',
    'The items could not be joined in the time this request had left; each item is stored on its own. Send the batch with "async": true to have them joined.',
  );

const ascii = (text: string) => Buffer.from(text, 'latin1');
/** Written out to disk in pieces of about this size. */
const FLUSH_BYTES = 1 << 20;
/** The merged file's catalog and page tree: written last, numbered first. */
const CATALOG = 1;
const PAGES = 2;

/**
 * Writes a PDF made of other PDFs' pages, one source file at a time, to `sink`: only the objects of
 * the file being appended are in memory, plus one reference and one offset per object written.
 */
export class MergedPdfWriter {
  readonly #sink: (chunk: Uint8Array) => Promise<void>;
  readonly #maxBytes: number;
  readonly #offsets: number[] = [];
  readonly #kids: PDFRef[] = [];
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #written = 0;
  #largest = PAGES;

  constructor(sink: (chunk: Uint8Array) => Promise<void>, { maxBytes = Number.POSITIVE_INFINITY }: { maxBytes?: number } = {}) {
    this.#sink = sink;
    this.#maxBytes = maxBytes;
    // The header, and a comment of bytes past 127 that marks the file as binary.
    this.#push(ascii('%PDF-1.7\n%\u00e2\u00e3\u00cf\u00d3\n\n'));
  }

  /** Bytes written so far (flushed to the sink or not). */
  get size(): number {
    return this.#written;
  }

  get pages(): number {
    return this.#kids.length;
  }

  /** Appends every page of `file`, in order. */
  async append(file: Uint8Array): Promise<void> {
    const source = await PDFDocument.load(file, { updateMetadata: false });
    // The pages and what they use, copied into a context of their own numbered after what was written.
    const target = PDFContext.create();
    target.largestObjectNumber = this.#largest;
    const copier = PDFObjectCopier.for(source.context, target);
    for (const page of source.getPages()) {
      const copied = copier.copy(page.node);
      copied.set(PDFName.of('Parent'), PDFRef.of(PAGES));
      this.#kids.push(target.register(copied));
    }
    for (const [ref, object] of target.enumerateIndirectObjects()) {
      const bytes = new Uint8Array(object.sizeInBytes());
      object.copyBytesInto(bytes, 0);
      this.#object(ref.objectNumber, bytes);
      if (this.#pendingBytes >= FLUSH_BYTES) await this.#flush();
    }
    this.#largest = target.largestObjectNumber;
    await this.#flush();
  }

  /** Writes the catalog, the page tree, the cross-reference table and the trailer. */
  async finish(): Promise<void> {
    this.#object(CATALOG, ascii(`<< /Type /Catalog /Pages ${PAGES} 0 R >>`));
    const kids = this.#kids.map((ref) => `${ref.objectNumber} 0 R`).join(' ');
    this.#object(PAGES, ascii(`<< /Type /Pages /Kids [${kids}] /Count ${this.#kids.length} >>`));
    const xrefAt = this.#written;
    const entries = ['xref\n', `0 ${this.#largest + 1}\n`, '0000000000 65535 f \n'];
    for (let n = 1; n <= this.#largest; n++) {
      const offset = this.#offsets[n];
      entries.push(offset === undefined ? '0000000000 65535 f \n' : `${String(offset).padStart(10, '0')} 00000 n \n`);
    }
    entries.push(`trailer\n<< /Size ${this.#largest + 1} /Root ${CATALOG} 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`);
    this.#push(ascii(entries.join('')));
    await this.#flush();
  }

  #object(objectNumber: number, body: Uint8Array): void {
    this.#offsets[objectNumber] = this.#written;
    this.#push(ascii(`${objectNumber} 0 obj\n`));
    this.#push(body);
    this.#push(ascii('\nendobj\n'));
  }

  #push(chunk: Uint8Array): void {
    this.#written += chunk.byteLength;
    if (this.#written > this.#maxBytes) throw tooLarge(this.#written, this.#maxBytes);
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.byteLength;
  }

  async #flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const chunk = this.#pending.length === 1 ? (this.#pending[0] as Uint8Array) : Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    await this.#sink(chunk);
  }
}

/** The files joined, in order, in memory: for small files and tests. */
export async function joinPdfs(files: readonly Uint8Array[]): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const writer = new MergedPdfWriter(async (chunk) => void chunks.push(chunk));
  for (const file of files) await writer.append(file);
  await writer.finish();
  return Buffer.concat(chunks);
}

/**
 * Joins the items' stored PDFs, in the order given, into one stored PDF of the same owner, under
 * `id` when the caller decides it (an asynchronous job's, lib/jobs/jobs.ts). Throws
 * MergeRefusedError when the merged file would pass the page or size limit (decided before any file
 * is read), or when `signal` is aborted before it is stored (checked before each item is read and
 * appended, and while reading and uploading).
 */
export async function storeMergedPdf(
  store: PdfStore,
  owner: Pick<ApiKey, 'keyId' | 'tier'>,
  items: readonly PdfRecord[],
  { id = newPdfId(), now = () => new Date(), signal }: { id?: string; now?: () => Date; signal?: AbortSignal } = {},
): Promise<PdfRecord> {
  const started = performance.now();
  const createdAt = now();
  // A merged file obeys the limits every PDF does; the items are charged and stored regardless.
  const pages = items.reduce((sum, item) => sum + item.pages, 0);
  if (pages > settings.maxPdfPages) throw tooLong(pages, settings.maxPdfPages);
  const bytes = items.reduce((sum, item) => sum + item.size, 0);
  if (bytes > settings.maxPdfBytes) throw tooLarge(bytes, settings.maxPdfBytes);
  const inTime = () => {
    if (signal?.aborted) throw outOfTime();
  };
  inTime();

  const directory = await mkdtemp(join(tmpdir(), 'merge-'));
  const path = join(directory, 'merged.pdf');
  let file: FileHandle | undefined;
  try {
    file = await open(path, 'w');
    const output = file;
    const writer = new MergedPdfWriter(async (chunk) => void (await output.write(chunk)), { maxBytes: settings.maxPdfBytes });
    for (const item of items) {
      inTime();
      const read = await readPdfObject(store, item, { ...(signal && { abortSignal: signal }) }).catch(orOutOfTime(signal));
      inTime();
      await writer.append(read);
    }
    await writer.finish();
    await file.close();
    file = undefined;
    inTime();
    const formats = new Set(items.map((item) => item.format));
    const record = describePdf({
      id,
      keyId: owner.keyId,
      size: writer.size,
      pages: writer.pages,
      // The items' format when they share one.
      format: formats.size === 1 ? (items[0] as PdfRecord).format : 'mixed',
      generationTimeMs: Math.round(performance.now() - started),
      createdAt: createdAt.toISOString(),
      retentionDays: TIERS[owner.tier].linkValidityDays,
      mergedFrom: items.map((item) => item.id),
    });
    await putPdfObject(store, record, createReadStream(path), { ...(signal && { abortSignal: signal }) }).catch(orOutOfTime(signal));
    // Past this point the file is stored: its record is written whatever the clock says, so that
    // a merged file is never left stored without one when the time was spent anyway.
    return await putPdfRecord(store, record);
  } finally {
    await file?.close();
    await rm(directory, { recursive: true, force: true });
  }
}

/** A failure caused by the signal's abort is the merge running out of time. */
function orOutOfTime(signal: AbortSignal | undefined) {
  return (error: unknown): never => {
    if (signal?.aborted) throw outOfTime();
    throw error;
  };
}
