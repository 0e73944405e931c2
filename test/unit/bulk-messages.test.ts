/**
 * A bulk job's messages fit SQS by construction (issue #40): whatever an upload holds, a chunk's
 * message names at most LINES_PER_CHUNK lines, so its size has a bound far within SQS's 1 MiB, and
 * ten of them fit a batch; a run of refused lines is split over chunks of at most MAX_LINES_PER_CHUNK
 * lines; and batches are packed within SQS's count and size limits, at the limits exactly.
 */
import { describe, expect, it } from 'vitest';
import { packBatches, refusedAtSubmission, SQS_LIMITS, type OutgoingMessage } from '#lib/aws/bulk-queue.ts';
import { chunkMessage, LINES_PER_CHUNK, MAX_LINES_PER_CHUNK, planInput } from '#lib/bulk/bulk-submission.ts';
import { NAMED_PROBLEMS } from '#lib/bulk/upload-check.ts';
import { bulkLineCheck, MAX_BULK_ITEMS, MAX_UPLOAD_BYTES, readUploadLines } from '#lib/bulk/upload-lines.ts';

const JOB_ID = 'job_' + 'x'.repeat(24);
const VALID = JSON.stringify({ html: '<h1>Invoice</h1>' });
const INVALID = JSON.stringify({ htm: '<h1>typo</h1>' });

/** The plan submission makes of an upload whose lines are `valid(n)` or not. */
async function planOf(lines: number, valid: (n: number) => boolean) {
  const text = Array.from({ length: lines }, (_, i) => (valid(i + 1) ? VALID : INVALID)).join('\n') + '\n';
  const check = await planInput(readUploadLines([Buffer.from(text)], { check: bulkLineCheck(undefined) }), { skipInvalid: true });
  if ('refused' in check) throw new Error(check.refused);
  return check;
}

describe("bulk jobs' messages", () => {
  it('200,000 refused lines and one valid: chunks of at most 1,000 lines, every message a few hundred bytes, the one valid line named once', async () => {
    // Arrange: the poison upload, its valid line in the middle
    const { plan, valid, invalid, problems } = await planOf(200_001, (n) => n === 100_001);

    // Act
    const messages = plan.map((chunk, index) => chunkMessage(JOB_ID, index, chunk));

    // Assert
    expect(valid).toBe(1);
    expect(invalid).toBe(200_000);
    expect(problems).toHaveLength(NAMED_PROBLEMS);
    expect(plan).toHaveLength(201);
    expect(Math.max(...plan.map((chunk) => chunk.last - chunk.first + 1))).toBe(MAX_LINES_PER_CHUNK);
    expect(plan.at(-1)!.last).toBe(200_001);
    expect(Math.max(...messages.map((message) => Buffer.byteLength(JSON.stringify(message))))).toBeLessThan(300);
    expect(messages.flatMap((message) => message.valid ?? [])).toEqual([100_001]);
    const holding = messages.find((message) => message.first <= 100_001 && 100_001 <= message.last)!;
    expect(refusedAtSubmission(holding)(100_001)).toBe(false);
    expect(refusedAtSubmission(holding)(100_000)).toBe(true);
  });

  it('valid lines between refused ones: ten valid lines a chunk, each message naming only them', async () => {
    // Arrange: every other line refused
    const { plan } = await planOf(95, (n) => n % 2 === 0);

    // Act
    const messages = plan.map((chunk, index) => chunkMessage(JOB_ID, index, chunk));

    // Assert
    expect(messages.map((message) => message.valid?.length)).toEqual([10, 10, 10, 10, 7]);
    expect(messages.flatMap((message) => message.valid)).toEqual(Array.from({ length: 47 }, (_, i) => 2 * (i + 1)));
    expect(messages.every((message) => message.invalid === undefined)).toBe(true);
  });

  it('a chunk with no refused line names none: its message is the same as before', async () => {
    const { plan } = await planOf(25, () => true);
    expect(plan.map((chunk, index) => chunkMessage(JOB_ID, index, chunk))).toEqual([
      { job_id: JOB_ID, chunk: 0, first: 1, last: 10, start: 0, end: plan[0]!.end },
      { job_id: JOB_ID, chunk: 1, first: 11, last: 20, start: plan[1]!.start, end: plan[1]!.end },
      { job_id: JOB_ID, chunk: 2, first: 21, last: 25, start: plan[2]!.start, end: plan[2]!.end },
    ]);
  });

  it('the largest message any upload can make is bounded, and ten of them fit a batch', () => {
    // Arrange: the largest numbers an upload within the limits can give, LINES_PER_CHUNK valid lines named
    const last = MAX_BULK_ITEMS;
    const chunk = { first: last - MAX_LINES_PER_CHUNK + 1, last, start: MAX_UPLOAD_BYTES - 1, end: MAX_UPLOAD_BYTES, invalid: [] as { line: number; code: 'INVALID_OPTIONS'; message: string }[] };
    for (let line = chunk.first; line <= last - LINES_PER_CHUNK; line++) chunk.invalid.push({ line, code: 'INVALID_OPTIONS', message: 'x'.repeat(500) });

    // Act
    const bytes = Buffer.byteLength(JSON.stringify(chunkMessage(JOB_ID, MAX_BULK_ITEMS, chunk)));

    // Assert
    expect(bytes).toBeLessThan(400);
    expect(10 * bytes).toBeLessThan(SQS_LIMITS.maxBatchBytes);
  });

  it('a plan stored by the version before (one chunk for 200,000 refused lines) gives a message naming its one valid line', () => {
    // Arrange
    const invalid = Array.from({ length: 200_001 }, (_, i) => i + 1)
      .filter((line) => line !== 7)
      .map((line) => ({ line, code: 'INVALID_OPTIONS' as const, message: 'The line names none of html, url or template_id' }));
    const legacy = { first: 1, last: 200_001, start: 0, end: 2_600_000, invalid };

    // Act
    const message = chunkMessage(JOB_ID, 0, legacy);

    // Assert
    expect(message.valid).toEqual([7]);
    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThan(200);
    // A message of that version still on a queue: its refused lines by number.
    expect(refusedAtSubmission({ invalid: [1, 2] })(2)).toBe(true);
    expect(refusedAtSubmission({ invalid: [1, 2] })(3)).toBe(false);
    expect(refusedAtSubmission({})(3)).toBe(false);
  });
});

describe('packBatches', () => {
  const message = (id: number, bytes: number): OutgoingMessage => ({ id: String(id), body: 'b'.repeat(bytes), group: 'key' });
  const shape = (batches: OutgoingMessage[][]) => batches.map((batch) => batch.map((entry) => entry.id).join(','));

  it('ten messages a batch at most', () => {
    const batches = packBatches(Array.from({ length: 25 }, (_, i) => message(i, 100)));
    expect(batches.map((batch) => batch.length)).toEqual([10, 10, 5]);
  });

  it('1 MiB of bodies a batch at most: ten messages of exactly 1 MiB together share one batch, one byte more does not', () => {
    // Arrange: ten bodies summing to exactly 1,048,576 bytes, then the same with one byte more
    const limit = SQS_LIMITS.maxBatchBytes;
    const exact = Array.from({ length: 10 }, (_, i) => message(i, Math.floor(limit / 10) + (i < limit % 10 ? 1 : 0)));
    const over = [...exact.slice(0, 9), message(9, exact[9]!.body.length + 1)];

    // Act / Assert
    expect(exact.reduce((sum, entry) => sum + entry.body.length, 0)).toBe(SQS_LIMITS.maxBatchBytes);
    expect(shape(packBatches(exact))).toEqual(['0,1,2,3,4,5,6,7,8,9']);
    expect(shape(packBatches(over))).toEqual(['0,1,2,3,4,5,6,7,8', '9']);
  });

  it('a message of exactly 1 MiB goes alone, in order with the others', () => {
    const batches = packBatches([message(0, 10), message(1, SQS_LIMITS.maxMessageBytes), message(2, 10), message(3, 10)]);
    expect(shape(batches)).toEqual(['0', '1', '2,3']);
  });

  it('bytes, not characters: multi-byte bodies count their UTF-8 length', () => {
    const euro = (id: number) => ({ id: String(id), body: '€'.repeat(200_000), group: 'key' }); // 600,000 bytes each
    expect(shape(packBatches([euro(0), euro(1)]))).toEqual(['0', '1']);
  });
});
