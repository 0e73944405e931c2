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
 *
 * The joining runs in a merge worker (./pdf-workers.ts), never on the event loop: pdf-lib parses
 * and copies an item in one block of CPU (about 70 ms for 300 pages, 6.8 s for 100 such items),
 * during which this thread would answer no one. This thread only reads the items and stores the file.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiKey } from '#lib/accounts/keys.ts';
import { TIERS } from '#lib/accounts/tiers.ts';
import { describePdf, putPdfObject, putPdfRecord, readPdfObject, type PdfRecord, type PdfStore } from '#lib/storage/pdfs.ts';
import { newPdfId } from './produce-pdf.ts';
import { settings } from '#lib/settings.ts';
import { MergeRefusedError, tooLarge } from './merged-pdf-writer.ts';
import { mergeInWorker } from './pdf-workers.ts';

export { joinPdfs, MergedPdfWriter, MergeRefusedError, type MergeRefusal } from './merged-pdf-writer.ts';

const tooLong = (pages: number, maxPages: number) =>
  new MergeRefusedError('TOO_MANY_PAGES', `The items have ${pages} pages together, more than the maximum of ${maxPages} for one PDF; each item is stored on its own.`);
const outOfTime = () =>
  new MergeRefusedError(
    'MERGE_TIMEOUT',
    'The items could not be joined in the time this request had left; each item is stored on its own. Send the batch with "async": true to have them joined.',
  );

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
    // Read here, joined in a merge worker (./pdf-workers.ts): the loop only waits for the store.
    async function* itemsRead() {
      for (const item of items) {
        inTime();
        const read = await readPdfObject(store, item, { ...(signal && { abortSignal: signal }) }).catch(orOutOfTime(signal));
        inTime();
        yield read;
      }
    }
    const merged = await mergeInWorker(owner.keyId, file.fd, itemsRead(), { maxBytes: settings.maxPdfBytes, ...(signal && { signal }) }).catch(orOutOfTime(signal));
    await file.close();
    file = undefined;
    inTime();
    const formats = new Set(items.map((item) => item.format));
    const record = describePdf({
      id,
      keyId: owner.keyId,
      size: merged.size,
      pages: merged.pages,
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
