/**
 * A chunk's lines as its worker reads them back from the job's upload: a ranged GET of the chunk's
 * bytes (lib/bulk/uploads.ts), split and checked by the same reader and line check submission used
 * (lib/bulk/upload-lines.ts), so both agree on every line's number, bytes and item.
 */
import type { Job } from '#lib/jobs/job-records.ts';
import type { PdfStore } from '#lib/storage/pdfs.ts';
import { readUploadLines, type LineCheck, type UploadLine } from './upload-lines.ts';
import { openUpload } from './uploads.ts';

/** Which lines a chunk holds, and their bytes in the job's upload. */
export interface ChunkRange {
  readonly first: number;
  readonly last: number;
  readonly start: number;
  readonly end: number;
}

/** A job's input is gone (its upload expired or was deleted while the job ran): its chunk cannot run. */
export class InputGoneError extends Error {
  override readonly name = 'InputGoneError';
}

/**
 * The chunk's lines, each with its item or its error, `first` to `last`. Empty lines at the chunk's
 * end have no bytes of their own to read back; they are checked as the empty text they are.
 */
export async function readChunkLines(
  store: Pick<PdfStore, 's3' | 'bucketName'>,
  job: Pick<Job, 'keyId' | 'bulk'>,
  chunk: ChunkRange,
  check: LineCheck<Record<string, unknown>>,
): Promise<UploadLine[]> {
  const opened = await openUpload(store, job, job.bulk!.uploadId, { range: { start: chunk.start, end: chunk.end } });
  if (!opened) throw new InputGoneError(`The input of this job (${job.bulk!.uploadId}) is gone`);
  const lines: UploadLine[] = [];
  for await (const line of readUploadLines(opened.body, { check, range: { start: chunk.start, firstLine: chunk.first } })) lines.push(line);
  for (let number = (lines.at(-1)?.line ?? chunk.first - 1) + 1; number <= chunk.last; number++) {
    const checked = check('');
    lines.push({ line: number, start: chunk.end, end: chunk.end, ...('item' in checked ? { item: checked.item } : { error: checked.problem }) });
  }
  return lines;
}
