/**
 * A batch's merged file (shared/spec/beyond.md, "Batch: one merged file"): the items' PDFs joined
 * in input order into one more stored PDF, made from the stored files (never printed again).
 *
 * The merged file is made of PDFs already charged, so it costs nothing: its record names no quota
 * reservation (lib/accounts/quota.ts counts records by reservation). Pages are copied whole, with
 * their links; what belongs to each file rather than to its pages (the tags' structure tree, the
 * bookmarks, the info dictionary) does not survive joining, so a merged file is untagged: the
 * items' own files keep theirs.
 */
import { PDFDocument } from 'pdf-lib';
import type { ApiKey } from '#lib/accounts/keys.ts';
import { TIERS } from '#lib/accounts/tiers.ts';
import { describePdf, readPdfObject, storePdf, type PdfRecord, type PdfStore } from '#lib/storage/pdfs.ts';
import { countPages } from '#lib/render/pdf-pages.ts';
import { newPdfId } from './produce-pdf.ts';
import { settings } from '#lib/settings.ts';

/** The items together have more pages than one PDF may. */
export class MergeTooLongError extends Error {
  override readonly name = 'MergeTooLongError';
  constructor(pages: number, maxPages: number) {
    super(`The items have ${pages} pages together, more than the maximum of ${maxPages} for one PDF; each item is stored on its own.`);
  }
}

/** The files joined, in order. */
export async function joinPdfs(files: readonly Uint8Array[]): Promise<Uint8Array> {
  const joined = await PDFDocument.create({ updateMetadata: false });
  for (const file of files) {
    const part = await PDFDocument.load(file, { updateMetadata: false });
    for (const page of await joined.copyPages(part, part.getPageIndices())) joined.addPage(page);
  }
  return joined.save();
}

/**
 * Joins the items' stored PDFs, in the order given, into one stored PDF of the same owner, under
 * `id` when the caller decides it (an asynchronous job's, lib/jobs/jobs.ts).
 */
export async function storeMergedPdf(
  store: PdfStore,
  owner: Pick<ApiKey, 'keyId' | 'tier'>,
  items: readonly PdfRecord[],
  { id = newPdfId(), now = () => new Date() }: { id?: string; now?: () => Date } = {},
): Promise<PdfRecord> {
  const started = performance.now();
  const createdAt = now();
  // A merged file obeys the page limit every PDF does; the items are charged and stored regardless.
  const pages = items.reduce((sum, item) => sum + item.pages, 0);
  if (pages > settings.maxPdfPages) throw new MergeTooLongError(pages, settings.maxPdfPages);
  const files = await Promise.all(items.map((item) => readPdfObject(store, item)));
  const bytes = await joinPdfs(files);
  const formats = new Set(items.map((item) => item.format));
  const record = describePdf({
    id,
    keyId: owner.keyId,
    size: bytes.byteLength,
    pages: await countPages(bytes),
    // The items' format when they share one.
    format: formats.size === 1 ? (items[0] as PdfRecord).format : 'mixed',
    generationTimeMs: Math.round(performance.now() - started),
    createdAt: createdAt.toISOString(),
    retentionDays: TIERS[owner.tier].linkValidityDays,
    mergedFrom: items.map((item) => item.id),
  });
  return storePdf(store, record, bytes);
}
