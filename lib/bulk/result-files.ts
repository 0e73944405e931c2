/**
 * A finished bulk job's files, written from its lines' results as they are read (never all held):
 * the manifest (manifest.ts) and, with `archive: true`, the ZIP of its stored PDFs (archive.ts),
 * under the job's prefix where `GET /v1/jobs/{job_id}/manifest|archive` finds them
 * (lib/bulk/bulk-records.ts `bulkResultObjectKey`).
 *
 * What the completion step (lib/bulk/bulk-completion.ts) calls: it gives the chunks' results in
 * order (`chunkResults`, reading a few chunks ahead) and how a result reads as a manifest line.
 */
import type { Job } from '#lib/jobs/job-records.ts';
import { contentTypeOf, extensionOf, type PdfStore } from '#lib/storage/pdfs.ts';
import { archiveEntryName, writeArchive, type ArchiveEntry, type WrittenArchive } from './archive.ts';
import { bulkObjectKey, type LineResult } from './bulk-records.ts';
import { writeManifest, type ManifestLine, type WrittenManifest } from './manifest.ts';

/**
 * Chunk results read at once ahead of the one being written: each is one small GET (a few KB), a
 * round trip apiece, so the manifest's pace is this many GETs per round trip. 32 make a million
 * lines' 100,000 results about 80 s of GETs at 25 ms each (8 made it over 5 minutes, the longest
 * step of the million's estimate, docs/bulk-jobs.md), holding some 100 KB, within the S3 client's
 * 50 sockets with room for the PDFs an archive reads beside them.
 */
const CHUNKS_AHEAD = 32;

/**
 * Every line's result, chunk by chunk in order, `read` called for up to CHUNKS_AHEAD chunks ahead
 * of the one being yielded (so 100,000 lines in 10,000 chunks are not 10,000 round trips in a row).
 */
export async function* chunkResults(chunks: number, read: (chunk: number) => Promise<readonly LineResult[]>, ahead = CHUNKS_AHEAD): AsyncGenerator<LineResult> {
  const pending: Promise<readonly LineResult[]>[] = [];
  let next = 0;
  const fill = () => {
    while (next < chunks && pending.length < ahead) {
      const reading = read(next++);
      // Awaited in turn; until then a failure must not count as unhandled.
      reading.catch(() => undefined);
      pending.push(reading);
    }
  };
  fill();
  while (pending.length > 0) {
    const results = await pending.shift()!;
    fill();
    yield* results;
  }
}

/** The job's manifest, one line per result in the order given. */
export function writeBulkManifest(
  store: Pick<PdfStore, 's3' | 'bucketName'>,
  job: Pick<Job, 'keyId' | 'id'>,
  lines: AsyncIterable<ManifestLine> | Iterable<ManifestLine>,
): Promise<WrittenManifest> {
  return writeManifest({ s3: store.s3, bucketName: store.bucketName, key: bulkObjectKey(job, 'manifest.jsonl') }, lines);
}

/** The archive's entries: each stored PDF under its `filename` or its line number, read from its object. */
async function* archiveEntries(results: AsyncIterable<LineResult> | Iterable<LineResult>): AsyncGenerator<ArchiveEntry> {
  for await (const result of results) {
    if (!result.success) continue;
    const { record } = result;
    yield {
      name: archiveEntryName(result.line, record.filename, extensionOf(contentTypeOf(record))),
      line: result.line,
      body: { key: record.objectKey },
      size: record.size,
      modifiedAt: new Date(record.createdAt),
    };
  }
}

/** The job's ZIP of every PDF its results say was stored (a PDF deleted since is left out, and named in `missing`). */
export function writeBulkArchive(
  store: Pick<PdfStore, 's3' | 'bucketName'>,
  job: Pick<Job, 'keyId' | 'id'>,
  results: AsyncIterable<LineResult> | Iterable<LineResult>,
): Promise<WrittenArchive> {
  return writeArchive({ s3: store.s3, bucketName: store.bucketName, key: bulkObjectKey(job, 'archive.zip') }, archiveEntries(results));
}
