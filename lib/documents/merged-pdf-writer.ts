/**
 * The writer of a batch's merged file (./merge.ts): other PDFs' pages joined, one source file at a
 * time, into one file written out as it goes. Kept apart from the storing so that a worker thread
 * (./merge-worker.ts) runs it with nothing else loaded: parsing and copying 100 items of 300 pages
 * takes seconds of CPU, which must never be the event loop's.
 */
import { PDFContext, PDFDocument, PDFName, PDFObjectCopier, PDFRef } from 'pdf-lib';

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

export const tooLarge = (bytes: number, maxBytes: number) =>
  new MergeRefusedError('MERGE_TOO_LARGE', `The items are ${bytes} bytes together, more than the maximum of ${maxBytes} for one PDF; each item is stored on its own.`);
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

