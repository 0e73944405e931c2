/**
 * Batches: up to 100 documents in one request, each rendered by its own render-function invocation,
 * in parallel with bounded concurrency, under a per-item timeout and a batch deadline.
 *
 * Every item ends as exactly one result in its input position, whatever order items finish in and
 * whatever goes wrong with one of them (a bad document, a render error, a crashed or timed-out
 * render function): one item never fails the batch or holds the others beyond its own timeout.
 */
import { z } from 'zod';
import type { ApiKey } from '#lib/accounts/keys.ts';
import type { PdfRecord } from '#lib/storage/pdfs.ts';
import { quoteInput, type DocumentFailureCode } from '#lib/render/errors.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '#lib/json-depth.ts';
import { sourceProblem } from './source.ts';
import { asyncRequestShape } from './document-options.ts';

/**
 * The item error codes of decisions.md "Batch", and three of our own: a document over the page limit
 * or over the PDF size limit, which retrying cannot mend, unlike a failed render, and a url whose
 * main document answered 4xx or 5xx (shared/spec/beyond.md). What each means is what the OpenAPI
 * document says (lib/api/openapi.ts).
 */
export const BATCH_ITEM_ERRORS = {
  INVALID_HTML: 'html is missing, empty, not a string or malformed, or the item is not an object.',
  INVALID_OPTIONS: 'An option, metadata or item field is unknown or out of range; the message names it.',
  URL_NOT_ALLOWED: 'The url is refused by the egress rules (not http(s), or a private address).',
  TOO_MANY_PAGES: 'The document is longer than the page limit.',
  PDF_TOO_LARGE: 'The PDF would be larger than the size limit.',
  URL_FETCH_FAILED: 'The url answered with an HTTP error status (4xx or 5xx).',
  RENDER_TIMEOUT: 'Rendering took too long, a readiness condition never held, or the batch ran out of time.',
  RENDER_FAILED: 'The document could not be rendered (or its url could not be reached); retrying may work.',
  PDF_GONE: 'With an Idempotency-Key: the PDF made for this item by an earlier run of the same request (a replay, or a retry after a crash) was deleted or has expired since; it was charged once. Send a new key to make it again.',
} as const;
export type BatchItemCode = keyof typeof BATCH_ITEM_ERRORS;

/** Why a merged file (`merge: true`) could not be made; the items' own files are there either way. */
export const MERGE_ERRORS = {
  TOO_MANY_PAGES: 'The items together are longer than the page limit of one PDF.',
  MERGE_FAILED: 'The PDFs could not be joined into one file.',
  PDF_GONE: 'A replay (Idempotency-Key): the merged file was deleted or has expired since.',
} as const;

/** The spec's absolute ceiling on items in one batch, whatever the tier. */
export const MAX_BATCH_SIZE = 100;

/**
 * The batch body. Items are `unknown` here on purpose: each item is checked on its own and fails
 * alone (`checkItemShape`, then the render function), never the whole batch.
 */
export const batchBodySchema = z.strictObject({
  pdfs: z.array(z.unknown(), { error: 'pdfs is required and must be an array of items' }).min(1, { error: 'pdfs must not be empty' }),
  merge: z.boolean({ error: 'merge must be true or false' }).optional(),
  ...asyncRequestShape,
});

/** How a document failure is reported in a batch item (an unreachable URL is a failed render). */
export function batchItemCode(code: DocumentFailureCode): BatchItemCode {
  return code === 'URL_UNREACHABLE' ? 'RENDER_FAILED' : code;
}

/** Largest `metadata` an item may carry, as JSON: it is echoed back, not stored or rendered. */
export const MAX_METADATA_BYTES = 16 * 1024;

/** What the batch function sends the render function for one item. */
export interface RenderInvocation {
  readonly owner: Pick<ApiKey, 'keyId' | 'tier'>;
  /** The batch's quota reservation, which the item's record names (lib/accounts/quota.ts). */
  readonly reservationId: string;
  /** The item's PDF id, when the batch decides it (an asynchronous job's, lib/jobs/jobs.ts). */
  readonly pdfId?: string;
  /** Longest the render may take (an asynchronous job's); the render timeout setting otherwise. */
  readonly renderTimeoutMs?: number;
  readonly item: { readonly html?: unknown; readonly url?: string; readonly options?: unknown };
}

/** What the render function answers for one item: a stored file whose record is not written yet, or why not. */
export type RenderOutcome =
  | { readonly ok: true; readonly record: PdfRecord }
  | { readonly ok: false; readonly code: BatchItemCode; readonly message: string };

export const metadataSchema = z
  .record(z.string(), z.unknown(), { error: 'metadata must be an object' })
  .refine((m) => Buffer.byteLength(JSON.stringify(m)) <= MAX_METADATA_BYTES, {
    error: `metadata must be at most ${MAX_METADATA_BYTES} bytes as JSON`,
    abort: true,
  })
  .refine((m) => m.filename === undefined || typeof m.filename === 'string', { error: 'metadata.filename must be a string' })
  .refine((m) => m.reference_id === undefined || typeof m.reference_id === 'string', {
    error: 'metadata.reference_id must be a string',
  });

/** The fields an item may hold (the OpenAPI document's item schema is checked against this list). */
export const ITEM_FIELDS: ReadonlySet<string> = new Set(['html', 'url', 'options', 'metadata']);

/**
 * The failure an item's shape already decides, before any rendering: not an object, unknown
 * fields, bad metadata, a non-string url, or html and url together.
 */
export function checkItemShape(item: unknown): { code: BatchItemCode; message: string } | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return { code: 'INVALID_HTML', message: 'Each item must be an object with html (or url)' };
  }
  // Within a request body the body's own limit already holds (lib/api/middlewares.ts); the render
  // function is checked the same way whoever invokes it.
  if (nestsDeeperThan(item, MAX_JSON_DEPTH)) {
    return { code: 'INVALID_OPTIONS', message: `The item nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep` };
  }
  const fields = item as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((name) => !ITEM_FIELDS.has(name));
  if (unknown.length) return { code: 'INVALID_OPTIONS', message: `Unknown item field${unknown.length > 1 ? 's' : ''}: ${quoteInput(unknown.join(', '))}` };
  if (fields.metadata !== undefined) {
    const metadata = metadataSchema.safeParse(fields.metadata);
    if (!metadata.success) return { code: 'INVALID_OPTIONS', message: metadata.error.issues[0]?.message ?? 'metadata is invalid' };
  }
  if (fields.url !== undefined && typeof fields.url !== 'string') return { code: 'URL_NOT_ALLOWED', message: 'url must be a string' };
  const missingOrBoth = sourceProblem(fields);
  if (missingOrBoth) return { code: batchItemCode(missingOrBoth.code), message: missingOrBoth.message };
  return undefined;
}

export type BatchItemResult =
  | {
      readonly success: true;
      readonly pdf_id: string;
      readonly download_url: string;
      readonly pages: number;
      readonly size_bytes: number;
      readonly metadata: unknown;
    }
  | { readonly success: false; readonly error: { readonly code: BatchItemCode; readonly message: string } };

export interface BatchRun {
  readonly items: readonly unknown[];
  readonly owner: Pick<ApiKey, 'keyId' | 'tier'>;
  /** The quota reservation the items are made under. */
  readonly reservationId: string;
  /** Invokes the render function for one item; must honour the signal. */
  readonly invokeRender: (invocation: RenderInvocation, signal: AbortSignal) => Promise<RenderOutcome>;
  /** Writes a done item's record: from then on its PDF exists, is listed and is charged. Answers the record stored. */
  readonly commit: (record: PdfRecord) => Promise<PdfRecord>;
  /** The item's download link, from its stored record. */
  readonly linkFor: (record: PdfRecord) => string;
  /** Render invocations in flight at once. */
  readonly concurrency: number;
  /** Longest one item may take from the start of its invocation. */
  readonly itemTimeoutMs: number;
  /** When every unfinished item gives up, so the batch answers inside the gateway's limit. */
  readonly deadline: AbortSignal;
  /**
   * An asynchronous job's batch (lib/jobs/jobs.ts), or one sent with an Idempotency-Key
   * (lib/api/earlier-runs.ts): the id of each item's PDF, and its record when an earlier run of the
   * same job or request already made it (that item is not rendered again; `gone` when its PDF was
   * deleted since), plus the longer render time a job's items get.
   */
  readonly madeBefore?: {
    readonly pdfIdOf: (index: number) => string;
    readonly recordOf: (index: number) => Promise<PdfRecord | 'gone' | undefined>;
    readonly renderTimeoutMs?: number;
  };
}

const failure = (code: BatchItemCode, message: string): BatchItemResult => ({ success: false, error: { code, message } });

export async function runBatch(run: BatchRun): Promise<BatchItemResult[]> {
  const results: BatchItemResult[] = new Array(run.items.length);
  let next = 0;

  const done = (record: PdfRecord, metadata: unknown): BatchItemResult => ({
    success: true,
    pdf_id: record.id,
    download_url: run.linkFor(record),
    pages: record.pages,
    size_bytes: record.size,
    metadata: metadata ?? {},
  });

  const processItem = async (index: number): Promise<BatchItemResult> => {
    const item = run.items[index];
    const shapeProblem = checkItemShape(item);
    if (shapeProblem) return failure(shapeProblem.code, shapeProblem.message);
    if (run.deadline.aborted) return failure('RENDER_TIMEOUT', 'The batch ran out of time before this item could start');

    const { html, url, options, metadata } = item as Record<string, unknown>;
    const made = await run.madeBefore?.recordOf(index);
    if (made === 'gone') return failure('PDF_GONE', 'The PDF an earlier run of this request made for this item was deleted since; it was charged once');
    if (made) return done(made, metadata);
    const signal = AbortSignal.any([AbortSignal.timeout(run.itemTimeoutMs), run.deadline]);
    try {
      const outcome = await run.invokeRender(
        {
          owner: run.owner,
          reservationId: run.reservationId,
          ...(run.madeBefore && { pdfId: run.madeBefore.pdfIdOf(index) }),
          ...(run.madeBefore?.renderTimeoutMs !== undefined && { renderTimeoutMs: run.madeBefore.renderTimeoutMs }),
          item: { html, ...(url !== undefined && { url: url as string }), options },
        },
        signal,
      );
      if (!outcome.ok) return failure(outcome.code, outcome.message);
      // An item that came back after its time is reported as timed out; without its record its
      // file is never linked, listed or charged (and expires with its retention prefix).
      if (signal.aborted) return failure('RENDER_TIMEOUT', 'Rendering this item took longer than its time limit');
      let stored: PdfRecord;
      try {
        stored = await run.commit(outcome.record);
      } catch {
        return failure('RENDER_FAILED', 'The PDF could not be stored; nothing was charged for it');
      }
      return done(stored, metadata);
    } catch {
      if (signal.aborted) return failure('RENDER_TIMEOUT', 'Rendering this item took longer than its time limit');
      return failure('RENDER_FAILED', 'The render function failed for this item');
    }
  };

  const worker = async () => {
    while (next < run.items.length) {
      const index = next++;
      results[index] = await processItem(index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(run.concurrency, run.items.length)) }, worker));
  return results;
}
