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
import { contentTypeOf, type PdfRecord } from '#lib/storage/pdfs.ts';
import { quoteInput, type DocumentFailureCode } from '#lib/render/errors.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '#lib/json-depth.ts';
import { DOCUMENT_OUTPUTS, sourceProblem, type DocumentOutput } from './source.ts';
import { asyncRequestShape, templateIdSchema } from './document-options.ts';
import { getTemplateHead, type TemplateStore } from '#lib/storage/templates.ts';

/**
 * The item error codes of decisions.md "Batch", those of stored templates (shared/spec/beyond.md:
 * data failing the template's data_schema is INVALID_OPTIONS), and three of our own: a document over the page limit
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
  MEMORY_LIMIT_EXCEEDED: 'The document needed more memory than the per-document limit (huge images, canvases or script allocations); retrying will not help.',
  URL_FETCH_FAILED: 'The url answered with an HTTP error status (4xx or 5xx).',
  RENDER_TIMEOUT: 'Rendering took too long, a readiness condition never held, or the batch ran out of time.',
  RENDER_FAILED: 'The document could not be rendered (or its url could not be reached); retrying may work.',
  SERVICE_BUSY: 'The item could not start before the batch ran out of time (the service, or its Lambda concurrency, was busy). Nothing was charged for it; send it again, or send the batch with "async": true.',
  PDF_GONE: 'With an Idempotency-Key: the PDF made for this item by an earlier run of the same request (a replay, or a retry after a crash) was deleted or has expired since; it was charged once. Send a new key to make it again.',
  TEMPLATE_NOT_FOUND: 'The item’s template_id (or its template_version) does not exist for this API key: never made, deleted, or a version no longer kept.',
  TEMPLATE_ERROR: 'The template could not be rendered with the item’s data (over the engine’s limits, an error in the template, or output that is not HTML); the message says why.',
  SIGNING_KEY_NOT_FOUND: 'The item’s signature.signing_key_id does not exist for this API key (never made, deleted, or another key’s). Nothing was charged for it.',
  SIGNING_KEY_NOT_READY: 'The item’s signing key has no valid certificate: upload its chain, or a new one if it expired. Nothing was charged for it.',
  TIMESTAMP_FAILED: 'The time-stamp authority did not answer in time, or refused, for the item’s signature with timestamp: true. Nothing was charged for it.',
} as const;
export type BatchItemCode = keyof typeof BATCH_ITEM_ERRORS;

/** Why a merged file (`merge: true`) could not be made; the items' own files are there either way. */
export const MERGE_ERRORS = {
  TOO_MANY_PAGES: 'The items together are longer than the page limit of one PDF.',
  MERGE_TOO_LARGE: 'The items together are larger than the size limit of one PDF.',
  MERGE_TIMEOUT: 'The items could not be joined in the time the request had left (a synchronous batch answers within 29 seconds); send the batch with "async": true.',
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

/** One item as the render function gets it. */
export interface RenderItem {
  /** The item's PDF id, when the batch decides it (an asynchronous job's, lib/jobs/jobs.ts). */
  readonly pdfId?: string;
  readonly item: {
    readonly html?: unknown;
    readonly url?: string;
    readonly markdown?: unknown;
    /** `"image"` for a picture (shared/spec/beyond.md "Images and Markdown"); a PDF when absent. */
    readonly output?: DocumentOutput;
    readonly options?: unknown;
    /** A stored template, its version (pinned by the batch when the item gave none) and its data. */
    readonly template_id?: unknown;
    readonly template_version?: unknown;
    readonly data?: unknown;
  };
}

/** What every item of one batch shares. */
interface RenderCommon {
  readonly owner: Pick<ApiKey, 'keyId' | 'tier'>;
  /** The batch's quota reservation, which the item's record names (lib/accounts/quota.ts). */
  readonly reservationId: string;
  /** Longest the render may take (an asynchronous job's); the render timeout setting otherwise. */
  readonly renderTimeoutMs?: number;
}

/** What the batch function sends the render function for one item. */
export interface RenderInvocation extends RenderCommon, RenderItem {}

/**
 * What the batch function sends the render function for several items, when Lambda throttles its
 * fan-out: rendered one after the other, each in a workspace of its own, one outcome each in order.
 */
export interface RenderGroupInvocation extends RenderCommon {
  readonly items: readonly RenderItem[];
  /**
   * When the batch stops waiting for this invocation's answer, from its start: an item that would
   * not end by then is not started (`notStarted`), and each one started gets at most the time left,
   * so the items done come back in time instead of being lost with the group at the deadline.
   */
  readonly answerWithinMs?: number;
}

/** Lambda refused the render invoke (TooManyRequestsException): nothing of it started. */
export class RenderThrottledError extends Error {
  override readonly name = 'RenderThrottledError';
}

/** What the render function answers for one item: a stored file whose record is not written yet, or why not. */
export type RenderOutcome =
  | { readonly ok: true; readonly record: PdfRecord }
  | { readonly ok: false; readonly code: BatchItemCode; readonly message: string };

/** What the render function answers for an item of a group: its outcome, or that it did not start it (it would not have ended within `answerWithinMs`). */
export type GroupItemOutcome = RenderOutcome | { readonly notStarted: true };

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
export const ITEM_FIELDS: ReadonlySet<string> = new Set(['html', 'url', 'markdown', 'output', 'template_id', 'template_version', 'data', 'options', 'metadata']);

/**
 * The failure an item's shape already decides, before any rendering: not an object, unknown
 * fields, bad metadata, a non-string url, or html and url together.
 */
export function checkItemShape(item: unknown): { code: BatchItemCode; message: string } | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return { code: 'INVALID_HTML', message: 'Each item must be an object with html (or url, or template_id)' };
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
  if (fields.output !== undefined && !(DOCUMENT_OUTPUTS as readonly unknown[]).includes(fields.output)) {
    return { code: 'INVALID_OPTIONS', message: `output must be one of ${DOCUMENT_OUTPUTS.join(', ')}` };
  }
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
      /** What the item made: `application/pdf`, or a picture's type for `"output": "image"`. */
      readonly content_type: string;
    }
  | { readonly success: false; readonly error: { readonly code: BatchItemCode; readonly message: string } };

export interface BatchRun {
  readonly items: readonly unknown[];
  readonly owner: Pick<ApiKey, 'keyId' | 'tier'>;
  /** The quota reservation the items are made under. */
  readonly reservationId: string;
  /** Invokes the render function for one item; must honour the signal. Throws RenderThrottledError when Lambda throttles it. */
  readonly invokeRender: (invocation: RenderInvocation, signal: AbortSignal) => Promise<RenderOutcome>;
  /** Invokes the render function for several items (one outcome each, in order), used when the fan-out is throttled. */
  readonly renderGroup?: (invocation: RenderGroupInvocation, signal: AbortSignal) => Promise<GroupItemOutcome[]>;
  /** Writes a done item's record: from then on its PDF exists, is listed and is charged. Answers the record stored. */
  readonly commit: (record: PdfRecord) => Promise<PdfRecord>;
  /** The item's download link, from its stored record. */
  readonly linkFor: (record: PdfRecord) => string;
  /** Render invocations in flight at once. */
  readonly concurrency: number;
  /** Longest one item may take from the start of its invocation. */
  readonly itemTimeoutMs: number;
  /** When every unfinished item gives up (epoch ms), so the batch answers inside the gateway's limit. */
  readonly deadlineAt: number;
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

/** Most items one render invocation takes when Lambda throttles the batch's fan-out. */
export const MAX_ITEMS_PER_INVOCATION = 10;
/**
 * About how long one invocation of a group should take: short enough that the fan-out hears of the
 * account's room again (and widens) every few seconds, and that the last groups end together
 * instead of one long group keeping the batch waiting; long enough that a group spares many invokes.
 */
const GROUP_TARGET_MS = 3_000;
/** Kept back from a group's time for its answer to travel and its records to be written before the deadline. */
const GROUP_ANSWER_MARGIN_MS = 1_500;
/** First wait after a throttled invoke when no other invocation of the batch is under way; doubled each time, with jitter. */
const THROTTLE_BACKOFF_MS = 100;
const THROTTLE_BACKOFF_MAX_MS = 2_000;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Renders the items in input order of results, each by the render function, at most
 * `run.concurrency` invocations at once; an item's record is written (`commit`) when its outcome
 * arrives in time.
 *
 * Lambda may throttle the fan-out (the account's or the function's concurrency is taken: 10 on many
 * new accounts). A throttled invoke started nothing, so its items go back to the front of the line
 * and the fan-out narrows: the invocation that was refused stops (unless it is the last, which
 * waits with jittered backoff), and the invocations left take several items each
 * (`renderGroup`, up to MAX_ITEMS_PER_INVOCATION, each item still in a browser context of its own),
 * so a batch of 100 finishes with the few invocations the account gives it. After a few successes
 * in a row it widens again. No item fails because of throttling while the batch has time; one that
 * could not start before the deadline fails `SERVICE_BUSY`, uncharged, to be retried (or sent with
 * `async`).
 */
export async function runBatch(run: BatchRun): Promise<BatchItemResult[]> {
  const results: BatchItemResult[] = new Array(run.items.length);
  const metadataOf = (index: number) => (run.items[index] as Record<string, unknown>).metadata;
  const done = (record: PdfRecord, metadata: unknown): BatchItemResult => ({
    success: true,
    pdf_id: record.id,
    download_url: run.linkFor(record),
    pages: record.pages,
    size_bytes: record.size,
    metadata: metadata ?? {},
    content_type: contentTypeOf(record),
  });

  // What needs no render is decided first: a bad shape, or what an earlier run made.
  const waiting: number[] = [];
  await Promise.all(
    run.items.map(async (item, index) => {
      const shapeProblem = checkItemShape(item);
      if (shapeProblem) return void (results[index] = failure(shapeProblem.code, shapeProblem.message));
      const made = await run.madeBefore?.recordOf(index);
      if (made === 'gone') return void (results[index] = failure('PDF_GONE', 'The PDF an earlier run of this request made for this item was deleted since; it was charged once'));
      if (made) return void (results[index] = done(made, metadataOf(index)));
      waiting.push(index);
    }),
  );
  waiting.sort((a, b) => a - b);

  const renderItemOf = (index: number): RenderItem => {
    const { html, url, markdown, output, options, template_id, template_version, data } = run.items[index] as Record<string, unknown>;
    return {
      item: {
        html,
        ...(url !== undefined && { url: url as string }),
        ...(markdown !== undefined && { markdown }),
        ...(output !== undefined && { output: output as DocumentOutput }),
        options,
        ...(template_id !== undefined && { template_id }),
        ...(template_version !== undefined && { template_version }),
        ...(data !== undefined && { data }),
      },
      ...(run.madeBefore && { pdfId: run.madeBefore.pdfIdOf(index) }),
    };
  };
  const common = {
    owner: run.owner,
    reservationId: run.reservationId,
    ...(run.madeBefore?.renderTimeoutMs !== undefined && { renderTimeoutMs: run.madeBefore.renderTimeoutMs }),
  };

  /** Records an item's outcome: its record written if it came in time. */
  const settle = async (index: number, outcome: RenderOutcome, signal: AbortSignal): Promise<void> => {
    if (!outcome.ok) return void (results[index] = failure(outcome.code, outcome.message));
    // An item that came back after its time is reported as timed out; without its record its
    // file is never linked, listed or charged (and expires with its retention prefix).
    if (signal.aborted) return void (results[index] = failure('RENDER_TIMEOUT', 'Rendering this item took longer than its time limit'));
    try {
      results[index] = done(await run.commit(outcome.record), metadataOf(index));
    } catch {
      results[index] = failure('RENDER_FAILED', 'The PDF could not be stored; nothing was charged for it');
    }
  };

  const deadline = AbortSignal.timeout(Math.max(1, run.deadlineAt - Date.now()));
  const timeLeftMs = () => run.deadlineAt - Date.now();
  let running = 0;
  let throttled = false;
  /** How long an item takes in this batch (a moving average over invocations, each its time over its items): how groups are sized. */
  let msPerItem: number | undefined;
  const timed = (ms: number) => void (msPerItem = msPerItem === undefined ? ms : 0.7 * msPerItem + 0.3 * ms);
  /** The widest the fan-out may go: the batch's concurrency, and no wider than its items. */
  const widest = Math.max(1, Math.min(run.concurrency, waiting.length));
  /**
   * The widest it goes now. Once throttled, one below the width that was refused: the batch leaves
   * an execution of the account to everything else (a single generate, a download) rather than
   * take every last one and have theirs throttled too. It widens by one after each success, so a
   * throttle that said little (an execution still finishing, another function's burst
   * that ended) does not hold the batch narrow for the rest of its time.
   */
  let ceiling = widest;

  /**
   * How many items the next invocation takes: one, unless the fan-out was throttled. Then the
   * items left spread over the invocations the account gives, in groups of about GROUP_TARGET_MS.
   */
  const groupSize = () => {
    if (!throttled || !run.renderGroup) return 1;
    const spread = Math.ceil(waiting.length / ceiling);
    const inTargetTime = msPerItem ? Math.floor(GROUP_TARGET_MS / msPerItem) : MAX_ITEMS_PER_INVOCATION;
    return Math.max(1, Math.min(MAX_ITEMS_PER_INVOCATION, spread, inTargetTime));
  };

  const invoke = async (group: number[]): Promise<'throttled' | 'done'> => {
    const signal = AbortSignal.any([AbortSignal.timeout(run.itemTimeoutMs * group.length), deadline]);
    const started = Date.now();
    try {
      if (group.length === 1) {
        const [index] = group as [number];
        const renderItem = renderItemOf(index);
        await settle(index, await run.invokeRender({ ...common, ...renderItem }, signal), signal);
      } else {
        const answerWithinMs = Math.max(1, timeLeftMs() - GROUP_ANSWER_MARGIN_MS);
        const outcomes = await run.renderGroup!({ ...common, items: group.map(renderItemOf), answerWithinMs }, signal);
        // What the render function did not start (it would not have ended in time) goes back to the line.
        const unstarted = group.filter((_, i) => outcomes[i] !== undefined && 'notStarted' in outcomes[i]);
        waiting.unshift(...unstarted);
        if (unstarted.length < group.length) timed((Date.now() - started) / (group.length - unstarted.length));
        await Promise.all(
          group.map((index, i) => {
            const outcome = outcomes[i] ?? { ok: false, code: 'RENDER_FAILED', message: 'The render function answered no outcome for this item' };
            return 'notStarted' in outcome ? undefined : settle(index, outcome, signal);
          }),
        );
        return 'done';
      }
      timed(Date.now() - started);
      return 'done';
    } catch (error) {
      if (error instanceof RenderThrottledError && !deadline.aborted) return 'throttled';
      const outcome = signal.aborted
        ? failure('RENDER_TIMEOUT', 'Rendering this item took longer than its time limit')
        : error instanceof RenderThrottledError
          ? notStarted(true)
          : failure('RENDER_FAILED', 'The render function failed for this item');
      for (const index of group) results[index] = outcome;
      return 'done';
    }
  };

  const worker = async (): Promise<void> => {
    running++;
    let backoffMs = THROTTLE_BACKOFF_MS;
    try {
      while (waiting.length > 0 && !deadline.aborted) {
        // Narrowed below this invocation's place: it stops once its work is done.
        if (running > ceiling) return;
        // An item that could not end before the deadline (a group's, before its answer's margin) is
        // not started: it fails uncharged, below.
        const size = groupSize();
        if (msPerItem !== undefined && timeLeftMs() < msPerItem + (size > 1 ? GROUP_ANSWER_MARGIN_MS : 0)) return;
        const group = waiting.splice(0, size);
        if ((await invoke(group)) === 'done') {
          backoffMs = THROTTLE_BACKOFF_MS;
          // Once throttled, every success widens the fan-out by one: a probe costs only a 429 (cheap,
          // uncharged), while a fan-out left narrow costs the batch its seconds (a group takes
          // seconds, so waiting for several successes in a row kept it narrow for most of them).
          if (throttled) {
            ceiling = Math.min(widest, ceiling + 1);
            if (running < ceiling && waiting.length > running) void worker();
          }
          continue;
        }
        // Throttled: nothing of the group started. Back to the front of the line, one invocation fewer.
        waiting.unshift(...group);
        throttled = true;
        ceiling = Math.max(1, Math.min(ceiling, running - 2));
        if (running > 1) return;
        await sleep(Math.random() * backoffMs, deadline);
        backoffMs = Math.min(THROTTLE_BACKOFF_MAX_MS, backoffMs * 2);
      }
    } finally {
      running--;
      if (running === 0) everyWorkerStopped();
    }
  };
  let everyWorkerStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (everyWorkerStopped = resolve));
  if (waiting.length > 0) {
    for (let i = 0; i < ceiling; i++) void worker();
    await stopped;
  }
  // Items still waiting when time ran out never started: nothing of them was made or charged.
  for (const index of waiting) results[index] = notStarted(throttled);
  return results;
}

/**
 * An item that never started: `SERVICE_BUSY` when Lambda throttled the batch (retry it, or send the
 * batch with `async`), the batch's own `RENDER_TIMEOUT` when its earlier items took the time.
 */
function notStarted(throttled: boolean): BatchItemResult {
  return throttled
    ? failure(
        'SERVICE_BUSY',
        'This item could not start before the batch ran out of time: the service was busy. Nothing was charged for it; send it again, or send the batch with "async": true.',
      )
    : failure('RENDER_TIMEOUT', 'The batch ran out of time before this item could start. Nothing was charged for it; send it again, or send the batch with "async": true.');
}

/**
 * A batch's items with the template version each will render fixed now: an item that names a
 * template without `template_version` gets the template's latest, so every item of one batch (or
 * one job, however long it waits) renders the same version even if another is saved meanwhile.
 * Items naming no template, or one that cannot be read, are left as they are (they fail alone when
 * rendered). One read per distinct template.
 */
export async function pinTemplateVersions(items: readonly unknown[], store: TemplateStore, owner: Pick<ApiKey, 'keyId'>): Promise<unknown[]> {
  const ids = items.filter(namesTemplateWithoutVersion).map((item) => item.template_id);
  if (ids.length === 0) return [...items];
  const latest = await latestTemplateVersions(ids, store, owner);
  return items.map((item) => withPinnedVersion(item, latest));
}

/** An item that names a template (a well-formed id) and no version of it: the latest is rendered unless pinned. */
export const namesTemplateWithoutVersion = (item: unknown): item is { template_id: string } =>
  typeof item === 'object' &&
  item !== null &&
  !Array.isArray(item) &&
  templateIdSchema.safeParse((item as Record<string, unknown>).template_id).success &&
  (item as Record<string, unknown>).template_version === undefined;

/** The latest version of each of the owner's templates named (one read each); one it cannot read, or another key's, is left out. */
export async function latestTemplateVersions(ids: Iterable<string>, store: TemplateStore, owner: Pick<ApiKey, 'keyId'>): Promise<Map<string, number>> {
  const latest = new Map<string, number>();
  await Promise.all(
    [...new Set(ids)].map(async (id) => {
      const head = await getTemplateHead(store, id);
      if (head && head.keyId === owner.keyId) latest.set(id, head.latestVersion);
    }),
  );
  return latest;
}

/** The item with the version `versions` fixes for its template, when it named none. */
export function withPinnedVersion<T>(item: T, versions: ReadonlyMap<string, number>): T {
  return namesTemplateWithoutVersion(item) && versions.has(item.template_id) ? { ...item, template_version: versions.get(item.template_id) } : item;
}
