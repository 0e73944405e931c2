/**
 * A bulk job's manifest (shared/spec/beyond.md, "Bulk jobs"): JSON Lines, one line per item of the
 * job in input order, each `{ "line": n, ... }` with what became of that line: its stored PDF, or
 * an `error` with `code` and `message` (an invalid line included). What a line says beside `line`
 * is the caller's (the job's result format); this module decides only how the file is written.
 *
 * Written by streaming into S3 (multipart.ts): the lines come from an async iterable (the job's
 * items read back in order), each is serialized and buffered into the current part, so memory stays
 * at one part whatever the job's size. The object appears only once complete: a failure aborts it
 * and rethrows, and writing it again from the start is always safe (the same key is overwritten).
 */
import { MultipartWriter, type MultipartTarget, type WrittenObject } from './multipart.ts';

export const MANIFEST_CONTENT_TYPE = 'application/x-ndjson';

/**
 * One manifest line: its input line number, and the line's outcome as the job reports it, for
 * example `{ line, pdf: <record> }` or `{ line, success: true, pdf_id, … }`; a line that produced no
 * PDF has `error: { code, message }` (and is what `failed` counts).
 */
export type ManifestLine = { readonly line: number; readonly error?: { readonly code: string; readonly message: string } } & Readonly<Record<string, unknown>>;

/** The manifest's counts: `succeeded + failed == lines`. */
export interface WrittenManifest extends WrittenObject {
  readonly lines: number;
  readonly succeeded: number;
  readonly failed: number;
}

/** One line's text, newline included, `line` first (for readers that look at a line's start). */
export function manifestLineText(entry: ManifestLine): string {
  const { line, ...outcome } = entry;
  return `${JSON.stringify({ line, ...outcome })}\n`;
}

/**
 * Writes the manifest from `lines`, which must come in input order. Their line numbers must rise
 * (a line out of order or given twice means the caller read the job wrongly: the manifest is given
 * up rather than written wrong).
 */
export async function writeManifest(target: Omit<MultipartTarget, 'contentType'>, lines: AsyncIterable<ManifestLine> | Iterable<ManifestLine>): Promise<WrittenManifest> {
  const writer = new MultipartWriter({ contentType: MANIFEST_CONTENT_TYPE, ...target });
  let count = 0;
  let succeeded = 0;
  let previous = 0;
  try {
    for await (const entry of lines) {
      if (!Number.isSafeInteger(entry.line) || entry.line <= previous) {
        throw new Error(`manifest line ${entry.line} after line ${previous}: lines must come in input order, once each`);
      }
      previous = entry.line;
      count += 1;
      if (entry.error === undefined) succeeded += 1;
      await writer.write(Buffer.from(manifestLineText(entry)));
    }
  } catch (error) {
    await writer.abort();
    throw error;
  }
  const written = await writer.end();
  return { ...written, lines: count, succeeded, failed: count - succeeded };
}
