/**
 * Reading a bulk job's JSON Lines upload (shared/spec/beyond.md, "Bulk jobs") as it streams from S3
 * (or any byte stream): one result per line, in order, each checked as a batch item, in memory that
 * does not grow with the upload (one line at most, and a line is at most MAX_LINE_BYTES).
 *
 * What is a line, decided here once for submission and workers alike:
 * - lines end with `\n`; a `\r` before it is dropped (`\r\n` files from Windows tools); a final line
 *   break ends the last line and does not start an empty one;
 * - a UTF-8 byte order mark at the very start is skipped (Windows editors write one); lines are
 *   numbered from 1 as an editor numbers them, and `start`/`end` give each line's bytes in the
 *   upload (the BOM and the line break excluded), so a worker can read one line back with a ranged
 *   GET (`bytes=start-(end-1)`) instead of the whole file;
 * - a blank line (empty, or only spaces and tabs) is a line like any other and the check decides
 *   about it: the default check refuses it (invalid, reported by number, a failure under
 *   `skip_invalid`), so the manifest keeps one line per input line and a stray blank line is seen
 *   rather than silently renumbering nothing;
 * - a line longer than MAX_LINE_BYTES is that line's error (its bytes are skipped, never held), so
 *   `skip_invalid` can leave it out like any other invalid line;
 * - a line that is not UTF-8 is that line's error (decoding it anyway would turn bytes into U+FFFD
 *   and render something the customer never wrote).
 *
 * What refuses the whole upload (UploadRefusedError, thrown as soon as it is known): more bytes than
 * MAX_UPLOAD_BYTES, more lines than MAX_BULK_ITEMS, or no line at all.
 */
import { isUtf8 } from 'node:buffer';
import { checkItemShape, type BatchItemCode } from '#lib/documents/batch.ts';
import { MAX_BULK_ITEMS, MAX_LINE_BYTES, MAX_UPLOAD_BYTES } from '#lib/documents/bulk-request.ts';
import { itemOptionsSchema } from '#lib/documents/document-options.ts';
import { quoteInput } from '#lib/render/errors.ts';
import { describeIssue, resolveRenderOptions } from '#lib/render/options.ts';
import { URL_ONLY_OPTIONS } from '#lib/render/url-access-options.ts';

// The limits live with the request they bound (lib/documents/bulk-request.ts, which the OpenAPI
// document also reads); re-exported for the reader's callers.
export { MAX_BULK_ITEMS, MAX_LINE_BYTES, MAX_UPLOAD_BYTES };

export interface UploadLimits {
  readonly maxLineBytes: number;
  readonly maxUploadBytes: number;
  readonly maxItems: number;
}

export const UPLOAD_LIMITS: UploadLimits = { maxLineBytes: MAX_LINE_BYTES, maxUploadBytes: MAX_UPLOAD_BYTES, maxItems: MAX_BULK_ITEMS };

/** Why one line is not an item: a batch item's error code (INVALID_OPTIONS, INVALID_HTML or URL_NOT_ALLOWED, as a batch reports it) and a message. */
export interface LineProblem {
  readonly code: BatchItemCode;
  readonly message: string;
}

/** A line's text (without its line break) checked into an item, or why it is not one. */
export type LineCheck<T> = (text: string) => { readonly item: T } | { readonly problem: LineProblem };

/** One line of the upload: exactly one of `item` and `error`. */
export interface UploadLine<T = Record<string, unknown>> {
  /** Its number, from 1. */
  readonly line: number;
  /** Its first byte in the upload, and the byte after its last (its line break excluded). */
  readonly start: number;
  readonly end: number;
  readonly item?: T;
  readonly error?: LineProblem;
}

export type UploadRefusal = 'too_large' | 'too_many_items' | 'empty';

/** The upload as a whole cannot be a job (400 for the caller, naming the limit). */
export class UploadRefusedError extends Error {
  override readonly name = 'UploadRefusedError';
  readonly reason: UploadRefusal;
  constructor(reason: UploadRefusal, message: string) {
    super(message);
    this.reason = reason;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * An item as a batch would take it, checked without rendering: its shape (lib/documents/batch.ts
 * `checkItemShape`: the sources, metadata, unknown fields), its options as every document's options
 * are checked, url-only options on a url, and html that is a non-empty string. What only rendering
 * can tell (malformed HTML, a url that does not resolve or is private) fails the item when it
 * renders, uncharged, as in a batch.
 */
export function checkBulkItem(item: unknown): LineProblem | undefined {
  const shape = checkItemShape(item);
  if (shape) return shape;
  const fields = item as Record<string, unknown>;
  const options = fields.options ?? {};
  if (!isObject(options)) return { code: 'INVALID_OPTIONS', message: 'options must be an object' };
  const parsed = itemOptionsSchema.safeParse(options);
  if (!parsed.success) return { code: 'INVALID_OPTIONS', message: describeIssue(parsed.error) };
  const resolved = resolveRenderOptions(parsed.data);
  if ('error' in resolved) return { code: 'INVALID_OPTIONS', message: resolved.error };
  if (fields.url === undefined) {
    const urlOnly = URL_ONLY_OPTIONS.find((name) => parsed.data[name] !== undefined);
    if (urlOnly) return { code: 'INVALID_OPTIONS', message: `${urlOnly} applies to url documents only; this item gives no url` };
  }
  if (fields.html !== undefined && (typeof fields.html !== 'string' || fields.html.trim() === '')) {
    return { code: 'INVALID_HTML', message: typeof fields.html === 'string' ? 'html must not be empty' : 'html must be a string' };
  }
  return undefined;
}

/**
 * A line's item with a job's shared `options` (POST /v1/pdf/bulk) under its own: the line's option
 * wins, option by option, as a template's options sit under a request's. Options that apply to url
 * documents only reach the `url` lines alone, so one job can mix html and url lines under shared
 * url options. Anything that is not an item with an options object is left as it is, for
 * checkBulkItem to name.
 */
export function withSharedOptions(item: unknown, shared: Readonly<Record<string, unknown>>): unknown {
  if (!isObject(item) || (item.options !== undefined && !isObject(item.options))) return item;
  const sharedHere = item.url === undefined ? Object.fromEntries(Object.entries(shared).filter(([name]) => !(URL_ONLY_OPTIONS as readonly string[]).includes(name))) : shared;
  if (Object.keys(sharedHere).length === 0) return item;
  return { ...item, options: { ...sharedHere, ...(item.options as Record<string, unknown> | undefined) } };
}

/**
 * The line check: one JSON object per line, checked by checkBulkItem, with the job's shared
 * `options` under the line's own when it has some (withSharedOptions); the item it yields carries them.
 */
export function bulkLineCheck(shared?: Readonly<Record<string, unknown>>): LineCheck<Record<string, unknown>> {
  return (text) => {
    if (text.trim() === '') return { problem: { code: 'INVALID_OPTIONS', message: 'The line is blank; each line must be one JSON object (a batch item)' } };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return { problem: { code: 'INVALID_OPTIONS', message: `The line is not valid JSON: ${quoteInput((error as Error).message)}` } };
    }
    const item = shared ? withSharedOptions(parsed, shared) : parsed;
    const problem = checkBulkItem(item);
    return problem ? { problem } : { item: item as Record<string, unknown> };
  };
}

/** The default line check: a job without shared options. */
export const checkBulkLineText: LineCheck<Record<string, unknown>> = bulkLineCheck();

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The body's bytes without a leading UTF-8 BOM (which may arrive split across chunks), refused
 * once they pass `maxBytes`. `onBom` is told when one was skipped.
 */
async function* bodyBytes(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, maxBytes: number, onBom: (() => void) | undefined): AsyncGenerator<Buffer> {
  let total = 0;
  // Without onBom, no BOM is looked for.
  let head: Buffer | undefined = onBom ? Buffer.alloc(0) : undefined;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) {
      throw new UploadRefusedError('too_large', `The upload is larger than ${maxBytes} bytes, the most one bulk job takes; split it into several jobs.`);
    }
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (head === undefined) {
      yield bytes;
      continue;
    }
    head = Buffer.concat([head, bytes]);
    if (head.length < BOM.length && BOM.subarray(0, head.length).equals(head)) continue;
    const start: Buffer = head;
    head = undefined;
    if (start.subarray(0, BOM.length).equals(BOM)) {
      onBom!();
      yield start.subarray(BOM.length);
    } else yield start;
  }
  if (head !== undefined && head.length > 0) yield head;
}

/**
 * The upload's lines, checked, in order; each is yielded as soon as its line break has streamed in,
 * so a caller can act on line 1 while the rest is still on its way. Throws UploadRefusedError once
 * the upload is known to be too large, to hold too many lines, or to hold none.
 */
export async function* readUploadLines<T = Record<string, unknown>>(
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  {
    check = checkBulkLineText as unknown as LineCheck<T>,
    limits = UPLOAD_LIMITS,
    range,
  }: {
    check?: LineCheck<T>;
    limits?: Partial<UploadLimits>;
    /**
     * The body is a part of the upload (a worker's ranged GET of its chunk): it starts at byte
     * `start` of the upload, with line `firstLine`, so lines keep their numbers and byte ranges
     * (and no BOM is looked for: there is one only at the upload's start).
     */
    range?: { readonly start: number; readonly firstLine: number };
  } = {},
): AsyncGenerator<UploadLine<T>> {
  const { maxLineBytes, maxUploadBytes, maxItems } = { ...UPLOAD_LIMITS, ...limits };
  /** The current line's bytes so far, unless it is already too long (then only counted). */
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let tooLong = false;
  /** The current line's last byte so far: a \r there belongs to the line break. */
  let lastByte = -1;
  /** Where the current line starts, and where the next byte read is, in the upload's bytes. */
  let lineStart = range?.start ?? 0;
  let position = range?.start ?? 0;
  let number = (range?.firstLine ?? 1) - 1;

  const add = (piece: Buffer) => {
    if (piece.length === 0) return;
    // +1: room for the \r of a \r\n line of exactly the limit. Beyond, the line's bytes are counted, not kept.
    if (!tooLong && pendingBytes + piece.length > maxLineBytes + 1) {
      tooLong = true;
      pending = [];
    }
    if (!tooLong) pending.push(Buffer.from(piece));
    pendingBytes += piece.length;
    lastByte = piece[piece.length - 1]!;
  };
  /** The line that ends at `position` (its line break not included). */
  const finishLine = (): UploadLine<T> => {
    number += 1;
    if (number > maxItems) {
      throw new UploadRefusedError('too_many_items', `The upload has more than ${maxItems} lines, the most one bulk job takes; split it into several jobs.`);
    }
    const withCr = lastByte === CARRIAGE_RETURN;
    const range = { line: number, start: lineStart, end: position - (withCr ? 1 : 0) };
    const textBytes = range.end - range.start;
    let line: UploadLine<T>;
    if (tooLong || textBytes > maxLineBytes) {
      line = { ...range, error: { code: 'INVALID_OPTIONS', message: `The line is longer than ${maxLineBytes} bytes, the most one line may hold` } };
    } else {
      const bytes = (pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes)).subarray(0, textBytes);
      if (!isUtf8(bytes)) line = { ...range, error: { code: 'INVALID_OPTIONS', message: 'The line is not valid UTF-8 text' } };
      else {
        const checked = check(bytes.toString('utf8'));
        line = 'item' in checked ? { ...range, item: checked.item } : { ...range, error: checked.problem };
      }
    }
    pending = [];
    pendingBytes = 0;
    tooLong = false;
    lastByte = -1;
    return line;
  };

  const bomSkipped = () => {
    position = BOM.length;
    lineStart = BOM.length;
  };
  for await (let buffer of bodyBytes(body, maxUploadBytes, range ? undefined : bomSkipped)) {
    for (let newline = buffer.indexOf(NEWLINE); newline >= 0; newline = buffer.indexOf(NEWLINE)) {
      add(buffer.subarray(0, newline));
      position += newline;
      const line = finishLine();
      position += 1;
      lineStart = position;
      buffer = buffer.subarray(newline + 1);
      yield line;
    }
    add(buffer);
    position += buffer.length;
  }
  // A last line without a line break.
  if (pendingBytes > 0) yield finishLine();
  if (number === 0 && !range) throw new UploadRefusedError('empty', 'The upload has no lines: give one batch item per line.');
}

/**
 * A bulk job's inline `items` (`POST /v1/pdf/bulk` without an upload), checked exactly as upload
 * lines are: item i is line i + 1, so errors read the same either way.
 */
export function checkInlineItems(items: readonly unknown[], check: (item: unknown) => LineProblem | undefined = checkBulkItem): UploadLine[] {
  return items.map((item, index) => {
    const problem = check(item);
    return { line: index + 1, start: 0, end: 0, ...(problem ? { error: problem } : { item: item as Record<string, unknown> }) };
  });
}
