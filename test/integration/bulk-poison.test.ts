/**
 * No upload can poison the bulk queue (issue #40), through the local stack. The poison: an
 * upload of 200,000 invalid lines and one valid line with `skip_invalid` was accepted, but its one
 * chunk message named every refused line (1.4 MB, over SQS's 1 MiB), so the job stayed `queued`
 * forever and the stack no longer started on its data. Now it runs to completion with its one
 * line, charged 1, quota == listed == manifest; its sealed request is gone once it ended. And the
 * 400s for invalid lines say what they should: "1 line is not a valid batch item", and no advice to
 * send `skip_invalid` when no line is valid.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { describe, expect, inject, it } from 'vitest';
import type { StackInfo } from '#lib/local/stack-info.ts';
import { createKey, expectApiError, quotaUsed, request, type TestKey } from '../support/api.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const call = (key: TestKey, method: string, path: string, body?: unknown) =>
  request(method, path, { apiKey: key.apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });

async function waitForEnd(key: TestKey, jobId: string, timeoutMs = 150_000) {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const job = await call(key, 'GET', `/v1/jobs/${jobId}`);
    if (job.body.completed_at) return job.body;
    if (Date.now() > giveUpAt) throw new Error(`job ${jobId} did not end: ${JSON.stringify(job.body)}`);
    await sleep(500);
  }
}

async function upload(key: TestKey, text: string): Promise<string> {
  const created = await call(key, 'POST', '/v1/uploads');
  expect(created.status).toBe(201);
  expect((await fetch(created.body.url, { method: 'PUT', body: text })).status).toBe(200);
  return created.body.upload_id;
}

/** The keys of the bucket's objects under `prefix`, read from the stack's own S3. */
async function objectsUnder(prefix: string): Promise<string[]> {
  const info = JSON.parse(readFileSync(join(inject('dataDir'), 'stack.json'), 'utf8')) as StackInfo;
  const s3 = new S3Client({ endpoint: info.s3Endpoint, region: info.region, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, forcePathStyle: true });
  try {
    const { Contents = [] } = await s3.send(new ListObjectsV2Command({ Bucket: info.bucketName, Prefix: prefix }));
    return Contents.map((object) => object.Key!);
  } finally {
    s3.destroy();
  }
}

const VALID = JSON.stringify({ html: '<h1>The one valid line</h1>', metadata: { n: 'valid' } });
const INVALID = JSON.stringify({ htm: '<h1>typo</h1>' });

describe('a bulk job no upload can poison', () => {
  it('200,000 invalid lines and one valid line, skip_invalid: runs to completion with its one line, charged 1; its sealed request is gone after', async () => {
    // Arrange: the valid line in the middle, as line 100,001
    const key = await createKey('pro');
    const lines = Array<string>(200_001).fill(INVALID);
    lines[100_000] = VALID;
    const uploadId = await upload(key, lines.join('\n') + '\n');

    // Act
    const accepted = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: uploadId, skip_invalid: true });
    const requestWhileQueued = await objectsUnder(`jobs/${key.keyId}/`);
    const job = await waitForEnd(key, accepted.body.job_id);
    const redirect = await call(key, 'GET', `/v1/jobs/${accepted.body.job_id}/manifest`);
    const manifest = (await (await fetch(redirect.headers.get('location')!)).text()).trim().split('\n');
    const listed = await call(key, 'GET', '/v1/pdf?limit=100');

    // Assess
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ status: 'queued', total: 200_001 });
    expect(job).toMatchObject({ status: 'succeeded', total: 200_001, succeeded: 1, failed: 200_000, result: { succeeded: 1, failed: 200_000 } });
    expect(manifest).toHaveLength(200_001);
    const valid = JSON.parse(manifest[100_000]!);
    expect(valid).toMatchObject({ line: 100_001, success: true, metadata: { n: 'valid' } });
    expect(JSON.parse(manifest[0]!)).toMatchObject({ line: 1, success: false, error: { code: 'INVALID_OPTIONS' } });
    expect(JSON.parse(manifest[200_000]!)).toMatchObject({ line: 200_001, success: false });
    expect(manifest.filter((line) => line.includes('"success":true'))).toHaveLength(1);
    expect(await quotaUsed(key)).toBe(1);
    expect(listed.body.data.map((record: { id: string }) => record.id)).toEqual([valid.pdf_id]);
    // The job's sealed request (its shared options) was there while it ran, and went when it ended.
    expect(requestWhileQueued).toEqual([`jobs/${key.keyId}/${accepted.body.job_id}.json`]);
    expect(await objectsUnder(`jobs/${key.keyId}/`)).toEqual([]);
  }, 180_000);

  it('names invalid lines in words that fit: "1 line is not a valid batch item", and no advice to skip when no line is valid', async () => {
    // Arrange
    const key = await createKey('pro');
    const oneInvalid = await upload(key, [VALID, INVALID, VALID].join('\n'));
    const allInvalid = await upload(key, [INVALID, INVALID, INVALID].join('\n'));
    const onlyLine = await upload(key, INVALID);

    // Act
    const one = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: oneInvalid });
    const noneSkipping = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: allInvalid, skip_invalid: true });
    const noneNotSkipping = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: allInvalid });
    const only = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: onlyLine, skip_invalid: true });

    // Assess
    expect(expectApiError(one, 400, 'invalid_request')).toMatch(/^1 line is not a valid batch item \(send "skip_invalid": true to run the others\): line 2: /);
    for (const none of [noneSkipping, noneNotSkipping]) {
      const message = expectApiError(none, 400, 'invalid_request');
      expect(message).toMatch(/^None of the 3 lines is a valid batch item: line 1: .*; line 2: .*; line 3: /);
      expect(message).not.toContain('skip_invalid');
    }
    const onlyMessage = expectApiError(only, 400, 'invalid_request');
    expect(onlyMessage).toMatch(/^The only line is not a valid batch item: line 1: /);
    expect(onlyMessage).not.toContain('skip_invalid');
    expect(await quotaUsed(key)).toBe(0);
  }, 60_000);
});
