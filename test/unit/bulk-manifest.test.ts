/**
 * A bulk job's manifest (lib/bulk/manifest.ts), streamed into a real S3 API (s3rver): one JSON line
 * per input line in order, a stored PDF's record or the line's error, over as many parts as it
 * takes; a manifest fed out of order is given up, and none is left behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeManifest, type ManifestLine } from '#lib/bulk/manifest.ts';
import { startTestS3, type TestS3 } from '../support/s3rver.ts';

let store: TestS3;
beforeAll(async () => {
  store = await startTestS3();
});
afterAll(async () => {
  await store?.close();
});

const record = (line: number) => ({ id: `pdf_${String(line).padStart(24, '0')}`, url: `https://pdf.example.com/v1/files/pdf_${line}`, size: 1000 + line, pages: 1, filename: `invoice-${line}.pdf` });

describe('writeManifest', () => {
  it('writes one JSON line per input line, in order, over many parts', async () => {
    // Arrange: 20,000 lines, every seventh an error; 64 KiB parts (s3rver takes parts below S3's 5 MiB).
    async function* lines(): AsyncGenerator<ManifestLine> {
      for (let line = 1; line <= 20_000; line++) {
        yield line % 7 === 0 ? { line, error: { code: 'INVALID_OPTIONS', message: `line ${line} is wrong` } } : { line, pdf: record(line) };
      }
    }

    // Act
    const written = await writeManifest({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/k/job/manifest.jsonl', firstPartBytes: 64 * 1024 }, lines());

    // Assert
    const text = (await store.read('bulk/k/job/manifest.jsonl')).toString('utf8');
    expect(text.endsWith('\n')).toBe(true);
    const parsed = text.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed).toHaveLength(20_000);
    expect(parsed.map((entry) => entry.line)).toEqual(Array.from({ length: 20_000 }, (_, index) => index + 1));
    expect(parsed[0]).toEqual({ line: 1, pdf: record(1) });
    expect(parsed[6]).toEqual({ line: 7, error: { code: 'INVALID_OPTIONS', message: 'line 7 is wrong' } });
    expect(written).toMatchObject({ lines: 20_000, failed: 2857, succeeded: 20_000 - 2857, bytes: Buffer.byteLength(text) });
    expect(written.parts).toBeGreaterThan(10);
  });

  it('writes a small manifest with one request', async () => {
    // Act
    const written = await writeManifest({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/k/small/manifest.jsonl' }, [{ line: 1, pdf: record(1) }]);

    // Assert
    expect(written.parts).toBe(0);
    expect((await store.read('bulk/k/small/manifest.jsonl')).toString()).toBe(`${JSON.stringify({ line: 1, pdf: record(1) })}\n`);
  });

  it('writes each line’s outcome as the job gives it, line first', async () => {
    // Arrange: a batch item's result, its fields in another order.
    const outcome = { success: true, pdf_id: 'pdf_000000000000000000000001', size_bytes: 1001, line: 1 };

    // Act
    const written = await writeManifest({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/k/as-given/manifest.jsonl' }, [
      outcome,
      { line: 2, success: false, error: { code: 'RENDER_TIMEOUT', message: 'too slow' } },
    ]);

    // Assert
    expect((await store.read('bulk/k/as-given/manifest.jsonl')).toString()).toBe(
      '{"line":1,"success":true,"pdf_id":"pdf_000000000000000000000001","size_bytes":1001}\n' +
        '{"line":2,"success":false,"error":{"code":"RENDER_TIMEOUT","message":"too slow"}}\n',
    );
    expect(written).toMatchObject({ lines: 2, succeeded: 1, failed: 1 });
  });

  it('gives up a manifest whose lines come out of order, and leaves none', async () => {
    // Act
    const writing = writeManifest({ s3: store.s3, bucketName: store.bucketName, key: 'bulk/k/wrong/manifest.jsonl' }, [
      { line: 1, pdf: record(1) },
      { line: 3, pdf: record(3) },
      { line: 2, pdf: record(2) },
    ]);

    // Assert
    await expect(writing).rejects.toThrow(/line 2 after line 3/);
    await expect(store.read('bulk/k/wrong/manifest.jsonl')).rejects.toMatchObject({ name: 'NoSuchKey' });
  });
});
