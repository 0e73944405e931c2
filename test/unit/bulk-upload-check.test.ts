/**
 * A bulk job's input read and checked in bounded memory (issue #40, item 2): without skip_invalid
 * reading stops once more than MAX_INVALID_LINES lines are invalid (the 400 says "at least" how
 * many and names the first), the problems kept are the first NAMED_PROBLEMS whatever the input,
 * refused lines past PLANNED_PROBLEMS are planned by number alone; and the same check run in a
 * worker thread (lib/bulk/upload-check-pool.ts), fed as it streams, answers the same.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { chunkMessage } from '#lib/bulk/bulk-submission.ts';
import { MAX_INVALID_LINES, NAMED_PROBLEMS, PLANNED_PROBLEMS, planInput, refusalOf, type UploadCheck } from '#lib/bulk/upload-check.ts';
import { UploadCheckPool } from '#lib/bulk/upload-check-pool.ts';
import { bulkLineCheck, readUploadLines } from '#lib/bulk/upload-lines.ts';

const VALID = JSON.stringify({ html: '<h1>Invoice</h1>' });
const INVALID = JSON.stringify({ htm: '<h1>typo</h1>' });

const upload = (lines: number, valid: (n: number) => boolean) => Buffer.from(Array.from({ length: lines }, (_, i) => (valid(i + 1) ? VALID : INVALID)).join('\n') + '\n');

/** The upload's bytes as S3 streams them: pieces of `size` bytes, counted as they are read. */
function streamed(bytes: Buffer, size = 16 * 1024) {
  const read = { bytes: 0 };
  const body = (async function* () {
    for (let at = 0; at < bytes.length; at += size) {
      read.bytes = Math.min(bytes.length, at + size);
      yield bytes.subarray(at, at + size);
    }
  })();
  return { body, read };
}

const planned = (check: UploadCheck) => {
  if ('refused' in check) throw new Error(check.refused);
  return check;
};

describe('planInput, in bounded memory', () => {
  it('without skip_invalid, stops at the first invalid line past the bound: the rest unread, "at least" in the 400, the first problems named', async () => {
    // Arrange: 2,000,000 invalid lines
    const bytes = upload(2_000_000, () => false);
    const { body, read } = streamed(bytes);

    // Act
    const check = planned(await planInput(readUploadLines(body, { check: bulkLineCheck() }), { skipInvalid: false }));

    // Assert
    expect(check.stoppedAt).toBe(MAX_INVALID_LINES + 1);
    expect(check.invalid).toBe(MAX_INVALID_LINES + 1);
    expect(check.problems).toHaveLength(NAMED_PROBLEMS);
    expect(read.bytes).toBeLessThan(bytes.length / 100);
    const refusal = refusalOf(check, { skipInvalid: false })!;
    expect(refusal).toMatch(/^At least 1,001 lines are not valid batch items \(reading stopped at line 1,001, past 1,000 invalid lines\): line 1: /);
    expect(refusal).toMatch(/; and at least 981 more$/);
    expect(refusal).not.toContain('skip_invalid');
  });

  it('with some valid lines, the early refusal advises skip_invalid', async () => {
    const check = planned(await planInput(readUploadLines([upload(5_000, (n) => n % 3 === 0)], { check: bulkLineCheck() }), { skipInvalid: false }));
    expect(check.stoppedAt).toBe(1_501);
    expect(refusalOf(check, { skipInvalid: false })).toMatch(/^At least 1,001 lines are not valid batch items \(reading stopped at line 1,501, past 1,000 invalid lines\) \(send "skip_invalid": true to run the others\): line 1: /);
  });

  it('at the bound exactly, every line is read and counted as before', async () => {
    const check = planned(await planInput(readUploadLines([upload(1_100, (n) => n > MAX_INVALID_LINES)], { check: bulkLineCheck() }), { skipInvalid: false }));
    expect(check.stoppedAt).toBeUndefined();
    expect(check.total).toBe(1_100);
    expect(refusalOf(check, { skipInvalid: false })).toMatch(/^1000 lines are not valid batch items \(send "skip_invalid": true to run the others\): line 1: .*; and 980 more$/);
  });

  it('with skip_invalid every line is read: the first refused lines planned with their problem, the others by number, the messages unchanged', async () => {
    // Arrange: 5,000 invalid lines around one valid line
    const check = planned(await planInput(readUploadLines([upload(5_001, (n) => n === 2_500)], { check: bulkLineCheck() }), { skipInvalid: true }));

    // Assert
    expect(check.stoppedAt).toBeUndefined();
    expect([check.valid, check.invalid, check.total]).toEqual([1, 5_000, 5_001]);
    expect(check.problems).toHaveLength(NAMED_PROBLEMS);
    expect(refusalOf(check, { skipInvalid: true })).toBeUndefined();
    const refused = check.plan.flatMap((chunk) => chunk.invalid ?? []);
    expect(refused).toHaveLength(5_000);
    expect(refused.filter((entry) => typeof entry === 'object')).toHaveLength(PLANNED_PROBLEMS);
    expect(refused[0]).toMatchObject({ line: 1, code: 'INVALID_OPTIONS' });
    expect(refused.at(-1)).toBe(5_001);
    expect(check.plan.map((chunk, index) => chunkMessage('job_x', index, chunk)).flatMap((message) => message.valid ?? [])).toEqual([2_500]);
  });

  it('no valid line: refused whatever skip_invalid says, with the count and no advice', async () => {
    const check = planned(await planInput(readUploadLines([upload(30, () => false)], { check: bulkLineCheck() }), { skipInvalid: true }));
    expect(refusalOf(check, { skipInvalid: true })).toMatch(/^None of the 30 lines is a valid batch item: line 1: .*; and 10 more$/);
  });

  it('an upload refused whole (too many lines) is refused with its words', async () => {
    const check = await planInput(readUploadLines([upload(11, () => true)], { check: bulkLineCheck(), limits: { maxItems: 10 } }));
    expect(refusalOf(check, { skipInvalid: true })).toMatch(/more than 10 lines/);
  });
});

describe('UploadCheckPool: the check in a worker thread, streamed', () => {
  const pool = new UploadCheckPool({ workers: 2 });
  afterAll(() => pool.close());

  it('answers as the check in place does, its bytes fed as they stream, with the shared options under each line', async () => {
    // Arrange
    const bytes = upload(2_345, (n) => n % 100 !== 0);
    const inPlace = planned(await planInput(readUploadLines([bytes], { check: bulkLineCheck({ format: 'A5' }) }), { skipInvalid: true }));

    // Act
    const inWorker = planned(await pool.check('key_a', streamed(bytes, 4096).body, { shared: { format: 'A5' }, skipInvalid: true }));

    // Assert
    expect(inWorker).toEqual(inPlace);
    expect(inWorker.invalid).toBe(23);
  });

  it('stops reading the stream once the answer is known, and the worker serves the next submission', async () => {
    // Arrange: 2,000,000 invalid lines, in pieces as S3 sends them
    const bytes = upload(2_000_000, () => false);
    const { body, read } = streamed(bytes);

    // Act
    const check = planned(await pool.check('key_a', body, { skipInvalid: false }));
    const next = planned(await pool.check('key_a', [upload(3, () => true)], { skipInvalid: false }));

    // Assert
    expect(check.stoppedAt).toBe(MAX_INVALID_LINES + 1);
    expect(read.bytes).toBeLessThan(bytes.length / 50);
    expect([next.valid, next.total]).toEqual([3, 3]);
  });

  it("a key's submission waiting its turn opens its input only once a worker is free for it", async () => {
    // Arrange: the key's first submission streams until released; a key holds one of two workers at most
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const first = pool.check('key_c', (async function* () {
      yield Buffer.from(VALID + '\n');
      await released;
      yield Buffer.from(VALID + '\n');
    })(), { skipInvalid: false });
    let opened = false;

    // Act
    const second = pool.check('key_c', async () => {
      opened = true;
      return [upload(1, () => true)];
    }, { skipInvalid: false });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const openedWhileWaiting = opened;
    release();
    const [firstCheck, secondCheck] = [planned(await first), planned(await second)];

    // Assert
    expect(openedWhileWaiting).toBe(false);
    expect(opened).toBe(true);
    expect([firstCheck.total, secondCheck.total]).toEqual([2, 1]);
  });

  it('an input whose stream fails mid-way (storage reset the connection) rejects with that error, and the pool serves the next submission', async () => {
    // Arrange: a stream that breaks after its first piece, as an S3 body whose connection was reset
    const broken = (async function* () {
      yield Buffer.from(VALID + '\n');
      throw Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    })();

    // Act
    const failed = await pool.check('key_d', broken, { skipInvalid: false }).then(
      () => undefined,
      (error: unknown) => error,
    );
    const after = planned(await pool.check('key_d', [upload(2, () => true)], { skipInvalid: false }));

    // Assert: the caller sees the storage's error (bulk-submission answers it 503, retry), never a plan
    expect(failed).toMatchObject({ message: 'aborted', code: 'ECONNRESET' });
    expect(after.valid).toBe(2);
  });

  it('a read past its time limit ends its worker and refuses the upload; the pool goes on', async () => {
    // Arrange: a stream that never ends
    const slow = new UploadCheckPool({ workers: 2, timeLimitMs: 300 });
    const never = (async function* () {
      yield Buffer.from(VALID + '\n');
      await new Promise(() => {});
    })();

    // Act
    const late = await slow.check('key_b', never, { skipInvalid: false });
    const after = planned(await slow.check('key_b', [upload(2, () => true)], { skipInvalid: false }));
    await slow.close();

    // Assert
    expect(late).toEqual({ refused: expect.stringMatching(/^Reading the upload took longer than 0.3 s/) });
    expect(after.valid).toBe(2);
  });
});
