/**
 * A bulk job's input lines: each line of the JSON Lines input is one batch item, checked exactly as
 * a batch checks its items before rendering (lib/documents/batch.ts `checkItemShape`: html/url or
 * whatever sources the batch item schema takes, metadata, unknown fields), with the job's shared
 * `options` under the line's own, validated as every document's options are. What passes here is
 * rendered by the same code as a batch item (lib/documents/render-item.ts); what only rendering can
 * tell (malformed HTML, a url that does not answer) fails that line alone, later.
 *
 * The same check runs at submission (every line, before anything is charged) and in the worker
 * (the line read back from the bucket), so both agree on which lines are the job's.
 */
import { checkItemShape, type BatchItemCode } from '#lib/documents/batch.ts';
import { itemOptionsSchema } from '#lib/documents/document-options.ts';
import { describeIssue, resolveRenderOptions } from '#lib/render/options.ts';

export interface LineProblem {
  readonly code: BatchItemCode;
  readonly message: string;
}

/** One line's item, with the job's shared options merged under its own. */
export type BulkItem = Record<string, unknown> & { readonly options?: Record<string, unknown> };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Parses and checks one line (its text, without the line break). `shared` are the job's `options`,
 * which the line's own `options` override field by field.
 */
export function checkBulkLine(text: string, shared: Record<string, unknown> | undefined): { item: BulkItem } | { problem: LineProblem } {
  if (text.trim() === '') return { problem: { code: 'INVALID_HTML', message: 'The line is empty; each line must be one JSON object (a batch item)' } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { problem: { code: 'INVALID_HTML', message: `The line is not valid JSON (${(error as Error).message.slice(0, 120)})` } };
  }
  const shapeProblem = checkItemShape(parsed);
  if (shapeProblem) return { problem: shapeProblem };
  const line = parsed as Record<string, unknown>;
  if (line.options !== undefined && !isObject(line.options)) return { problem: { code: 'INVALID_OPTIONS', message: 'options must be an object' } };
  const options = shared || line.options ? { ...shared, ...(line.options as Record<string, unknown> | undefined) } : undefined;
  if (options) {
    const checked = itemOptionsSchema.safeParse(options);
    if (!checked.success) return { problem: { code: 'INVALID_OPTIONS', message: describeIssue(checked.error) } };
    const resolved = resolveRenderOptions(checked.data);
    if ('error' in resolved) return { problem: { code: 'INVALID_OPTIONS', message: resolved.error } };
  }
  return { item: { ...line, ...(options && { options }) } };
}

/** One line of the input: its number (from 1), its text, and where it is in the input's bytes. */
export interface InputLine {
  readonly number: number;
  readonly text: string;
  /** First byte of the line, and the byte after its end (its line break excluded). */
  readonly start: number;
  readonly end: number;
}

/**
 * The lines of a JSON Lines input as it streams in, never holding more than one line (a line may be
 * as large as `maxLineBytes`; a longer one is refused rather than buffered). A final line break
 * ends the last line; it does not start an empty one. `\r\n` line ends are taken too.
 */
export async function* inputLines(chunks: AsyncIterable<Uint8Array>, { maxLineBytes, firstLine = 1, offset = 0 }: { maxLineBytes: number; firstLine?: number; offset?: number }): AsyncGenerator<InputLine> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lineStart = offset;
  let number = firstLine;
  let position = offset;
  const finish = (upTo: Buffer): InputLine => {
    const bytes = pendingBytes ? Buffer.concat([...pending, upTo]) : upTo;
    pending = [];
    pendingBytes = 0;
    const withoutCr = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, -1) : bytes;
    const line = { number, text: withoutCr.toString('utf8'), start: lineStart, end: lineStart + withoutCr.length };
    number++;
    return line;
  };
  for await (const piece of chunks) {
    let buffer = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    for (let newline = buffer.indexOf(0x0a); newline >= 0; newline = buffer.indexOf(0x0a)) {
      if (pendingBytes + newline > maxLineBytes) throw new LineTooLongError(number, maxLineBytes);
      const line = finish(buffer.subarray(0, newline));
      position += newline + 1;
      lineStart = position;
      yield line;
      buffer = buffer.subarray(newline + 1);
    }
    if (buffer.length) {
      if (pendingBytes + buffer.length > maxLineBytes) throw new LineTooLongError(number, maxLineBytes);
      pending.push(Buffer.from(buffer));
      pendingBytes += buffer.length;
      position += buffer.length;
    }
  }
  if (pendingBytes > 0) yield finish(Buffer.alloc(0));
}

/** A line longer than a bulk line may be: the input is refused (it cannot be read line by line). */
export class LineTooLongError extends Error {
  readonly line: number;
  constructor(line: number, maxLineBytes: number) {
    super(`Line ${line} is longer than ${maxLineBytes} bytes, the most one line may hold`);
    this.line = line;
  }
}
