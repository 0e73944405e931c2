/**
 * A finished bulk job's files from its lines' results (lib/bulk/result-files.ts): the chunks' results
 * read a few ahead yet yielded in order, and the archive of the stored PDFs (each under its filename
 * or line number, read from its object in a real S3 API, s3rver) where the job's archive link finds it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkObjectKey, type LineResult } from '#lib/bulk/bulk-records.ts';
import { chunkResults, writeBulkArchive, writeBulkManifest } from '#lib/bulk/result-files.ts';
import type { PdfRecord } from '#lib/storage/pdfs.ts';
import { startTestS3, type TestS3 } from '../support/s3rver.ts';

const run = promisify(execFile);
let store: TestS3;
let workDir: string;
beforeAll(async () => {
  store = await startTestS3();
  workDir = await mkdtemp(join(tmpdir(), 'bulk-results-'));
});
afterAll(async () => {
  await store?.close();
  await rm(workDir, { recursive: true, force: true });
});

const job = { keyId: 'key_results', id: 'job_results0000000000000000' };

function stored(line: number, filename?: string): LineResult {
  const record: PdfRecord = {
    id: `pdf_${String(line).padStart(24, '0')}`,
    keyId: job.keyId,
    objectKey: `retention/7d/${job.keyId}/pdf_${line}.pdf`,
    size: 0,
    pages: 1,
    format: 'A4',
    generationTimeMs: 10,
    createdAt: '2026-11-25T12:00:00.000Z',
    expiresAt: '2026-12-02T12:00:00.000Z',
    ...(filename !== undefined && { filename }),
  };
  return { line, success: true, record };
}

describe('chunkResults', () => {
  it('yields every chunk’s results in order while reading a few chunks ahead', async () => {
    // Arrange: 30 chunks of 3 lines, each read answering after a random short while.
    let reading = 0;
    let mostReading = 0;
    const read = async (chunk: number): Promise<LineResult[]> => {
      mostReading = Math.max(mostReading, ++reading);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10));
      reading -= 1;
      return [1, 2, 3].map((n) => ({ line: chunk * 3 + n, success: false, code: 'RENDER_FAILED', message: 'x', counted: false }));
    };

    // Act
    const lines: number[] = [];
    for await (const result of chunkResults(30, read, 4)) lines.push(result.line);

    // Assert
    expect(lines).toEqual(Array.from({ length: 90 }, (_, index) => index + 1));
    expect(mostReading).toBeGreaterThan(1);
    expect(mostReading).toBeLessThanOrEqual(4);
  });

  it('fails with the first chunk that cannot be read, in order', async () => {
    // Act
    const lines: number[] = [];
    const reading = (async () => {
      for await (const result of chunkResults(5, async (chunk) => {
        if (chunk === 2) throw new Error('chunk 2 is missing');
        return [{ line: chunk + 1, success: false, code: 'RENDER_FAILED', message: 'x', counted: false }];
      })) lines.push(result.line);
    })();

    // Assert
    await expect(reading).rejects.toThrow('chunk 2 is missing');
    expect(lines).toEqual([1, 2]);
  });
});

describe('writeBulkArchive and writeBulkManifest', () => {
  it('write the job’s archive of its stored PDFs and its manifest where its links find them', async () => {
    // Arrange: lines 1, 2 and 4 stored (2 and 4 under the same filename), line 3 failed.
    const results = [stored(1), stored(2, 'invoice.pdf'), { line: 3, success: false, code: 'RENDER_TIMEOUT', message: 'slow', counted: false } as LineResult, stored(4, 'invoice.pdf')];
    const bodies = new Map<number, Buffer>();
    for (const result of results) {
      if (!result.success) continue;
      const body = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(5_000)]);
      bodies.set(result.line, body);
      await store.s3.send(new PutObjectCommand({ Bucket: store.bucketName, Key: result.record.objectKey, Body: body }));
      Object.assign(result.record, { size: body.length });
    }

    // Act
    const archive = await writeBulkArchive(store, job, results);
    const manifest = await writeBulkManifest(
      store,
      job,
      results.map((result) => (result.success ? { line: result.line, success: true, pdf_id: result.record.id } : { line: result.line, success: false, error: { code: result.code, message: result.message } })),
    );

    // Assert
    expect(archive).toMatchObject({ key: bulkObjectKey(job, 'archive.zip'), entries: 3, missing: [] });
    expect(manifest).toMatchObject({ key: bulkObjectKey(job, 'manifest.jsonl'), lines: 4, succeeded: 3, failed: 1 });
    const path = join(workDir, 'archive.zip');
    await writeFile(path, await store.read(bulkObjectKey(job, 'archive.zip')));
    const script = 'import sys, zipfile, json\nz = zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint(json.dumps([[i.filename, i.date_time, z.read(i).hex()] for i in z.infolist()]))';
    const entries = JSON.parse((await run('python3', ['-c', script, path])).stdout) as [string, number[], string][];
    expect(entries.map(([name, date]) => [name, date])).toEqual([
      ['000001.pdf', [2026, 11, 25, 12, 0, 0]],
      ['invoice.pdf', [2026, 11, 25, 12, 0, 0]],
      ['invoice (line 4).pdf', [2026, 11, 25, 12, 0, 0]],
    ]);
    expect(entries.map(([, , hex]) => Buffer.from(hex, 'hex'))).toEqual([bodies.get(1), bodies.get(2), bodies.get(4)]);
  });
});
