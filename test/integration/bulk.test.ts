/**
 * Bulk jobs through the local stack (issue #32): lines checked and refused by number, the quota of
 * the valid lines reserved (402 when it does not fit), chunks on the local SQS queue run by the bulk
 * worker through Lambda's event source mapping, and the money exact: quota used == PDFs listed ==
 * downloadable == manifest successes, after a duplicate delivery and after a cancel too; and fair
 * between keys: a small job sent after a large one of another key finishes first.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { GetQueueUrlCommand, SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, inject, it } from 'vitest';
import { createKey, download, expectApiError, quotaUsed, request, type TestKey } from '../support/api.ts';
import { readPdfText } from '../support/pdf-text.ts';

const run = promisify(execFile);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const call = (key: TestKey, method: string, path: string, body?: unknown) =>
  request(method, path, { apiKey: key.apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });

async function waitForEnd(key: TestKey, jobId: string, timeoutMs = 240_000) {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const job = await call(key, 'GET', `/v1/jobs/${jobId}`);
    if (job.body.completed_at) return job.body;
    if (Date.now() > giveUpAt) throw new Error(`job ${jobId} did not end: ${JSON.stringify(job.body)}`);
    await sleep(300);
  }
}

async function manifestOf(key: TestKey, jobId: string): Promise<any[]> {
  const redirect = await call(key, 'GET', `/v1/jobs/${jobId}/manifest`);
  expect(redirect.status).toBe(302);
  const text = await (await fetch(redirect.headers.get('location')!)).text();
  return text.trim().split('\n').map((line) => JSON.parse(line));
}

async function listedIds(key: TestKey): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(key, 'GET', `/v1/pdf?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    ids.push(...(page.body.data as { id: string }[]).map((record) => record.id));
    cursor = page.body.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

/** quota used == PDFs listed == manifest successes, and each success downloads as a PDF. */
async function expectExact(key: TestKey, manifest: any[]) {
  const successes = manifest.filter((line) => line.success);
  expect(await quotaUsed(key)).toBe(successes.length);
  expect((await listedIds(key)).sort()).toEqual(successes.map((line) => line.pdf_id).sort());
  for (const line of successes.slice(0, 3)) expect(Buffer.from(await download(line.download_url)).subarray(0, 5).toString()).toBe('%PDF-');
}

const invoice = (n: number, extra: Record<string, unknown> = {}) => ({ html: `<h1>Invoice ${n}</h1>`, metadata: { n }, ...extra });

/** The entries of a ZIP as Python's zipfile reads them (every CRC checked): name and text of each PDF. */
async function zipEntries(bytes: Uint8Array): Promise<{ name: string; text: string }[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bulk-zip-'));
  try {
    const path = join(dir, 'archive.zip');
    await writeFile(path, bytes);
    const script = 'import sys, zipfile, json\nz = zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint(json.dumps([i.filename for i in z.infolist()]))';
    const names = JSON.parse((await run('python3', ['-c', script, path])).stdout) as string[];
    const entries: { name: string; text: string }[] = [];
    for (const name of names) {
      const { stdout } = await run('python3', ['-c', 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))', path, name], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
      entries.push({ name, text: (await readPdfText(new Uint8Array(stdout))).map((page) => page.text).join('\n') });
    }
    return entries;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('bulk jobs', () => {
  it('refuses invalid lines by number (400), runs the rest with skip_invalid, and the manifest matches the input line for line', async () => {
    // Arrange: 20 lines (two chunks), lines 4 and 17 invalid
    const key = await createKey('pro');
    const items: unknown[] = Array.from({ length: 20 }, (_, i) => invoice(i + 1));
    items[3] = { html: '<p>x</p>', colour: 'red' };
    items[16] = { html: '<p>x</p>', options: { format: 'A9' } };

    // Act
    const refused = await call(key, 'POST', '/v1/pdf/bulk', { items });
    const merged = await call(key, 'POST', '/v1/pdf/bulk', { items, merge: true });
    const accepted = await call(key, 'POST', '/v1/pdf/bulk', { items, skip_invalid: true, options: { format: 'A5' } });
    const job = await waitForEnd(key, accepted.body.job_id);
    const manifest = await manifestOf(key, accepted.body.job_id);

    // Assess
    const message = expectApiError(refused, 400, 'invalid_request');
    expect(message).toContain('line 4');
    expect(message).toContain('line 17');
    expectApiError(merged, 400, 'invalid_request');
    expect(accepted.status).toBe(202);
    expect(accepted.body).toMatchObject({ status: 'queued', total: 20 });
    expect(job).toMatchObject({ status: 'succeeded', total: 20, succeeded: 18, failed: 2, result: { succeeded: 18, failed: 2 } });
    expect(manifest.map((line) => line.line)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(manifest.filter((line) => !line.success).map((line) => [line.line, line.error.code])).toEqual([
      [4, 'INVALID_OPTIONS'],
      [17, 'INVALID_OPTIONS'],
    ]);
    expect(manifest[0].metadata).toEqual({ n: 1 });
    await expectExact(key, manifest);
  }, 300_000);

  it('with an Idempotency-Key, a submission sent again is the first job (replayed, its status as it is now), never a second one charged for the same lines; another body under the key is 422', async () => {
    // Arrange
    const key = await createKey('pro');
    const items = Array.from({ length: 5 }, (_, i) => invoice(i + 1));
    const submit = (body: unknown) =>
      request('POST', '/v1/pdf/bulk', { apiKey: key.apiKey, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'bulk-order-7' } });

    // Act: the submission, a retry of it (its answer lost, say), another body under the same key, a retry once the job has ended
    const first = await submit({ items });
    const again = await submit({ items });
    const other = await submit({ items: items.slice(1) });
    const job = await waitForEnd(key, first.body.job_id);
    const afterTheEnd = await submit({ items });

    // Assess
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.job_id).toBe(first.body.job_id);
    expectApiError(other, 422, 'idempotency_key_reused');
    expect(job).toMatchObject({ status: 'succeeded', total: 5, succeeded: 5, failed: 0 });
    expect(afterTheEnd.body).toMatchObject({ job_id: first.body.job_id, status: 'succeeded' });
    await expectExact(key, await manifestOf(key, first.body.job_id));
  }, 300_000);

  it('an upload backs one job: sent again it is 409 naming the job (before and after it ends), charged once, and the upload is removed when the job ends', async () => {
    // Arrange: an upload of three lines
    const key = await createKey('pro');
    const upload = await call(key, 'POST', '/v1/uploads');
    await fetch(upload.body.url, { method: 'PUT', body: [1, 2, 3].map((n) => JSON.stringify(invoice(n))).join('\n') });
    const info = JSON.parse(readFileSync(join(inject('dataDir'), 'stack.json'), 'utf8')) as { s3Endpoint: string; region: string; bucketName: string };
    const s3 = new S3Client({ endpoint: info.s3Endpoint, region: info.region, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    const uploadExists = async () =>
      ((await s3.send(new ListObjectsV2Command({ Bucket: info.bucketName, Prefix: `uploads/${key.keyId}/${upload.body.upload_id}` }))).KeyCount ?? 0) > 0;

    // Act: the job, the same upload again while it runs (another body: no idempotent replay), and once it ended
    const accepted = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: upload.body.upload_id });
    const whileRunning = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: upload.body.upload_id, skip_invalid: true });
    const existedWhileRunning = await uploadExists();
    const job = await waitForEnd(key, accepted.body.job_id);
    const afterEnd = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: upload.body.upload_id, archive: true });
    const existsAfterEnd = await uploadExists();
    s3.destroy();

    // Assess
    expect(accepted.status).toBe(202);
    for (const refused of [whileRunning, afterEnd]) {
      expectApiError(refused, 409, 'upload_in_use');
      expect(refused.body.error.job_id).toBe(accepted.body.job_id);
      expect(refused.body.error.message).toContain(accepted.body.job_id);
    }
    expect(job).toMatchObject({ status: 'succeeded', total: 3, succeeded: 3, failed: 0 });
    expect([existedWhileRunning, existsAfterEnd]).toEqual([true, false]);
    expect(await quotaUsed(key)).toBe(3);
    await expectExact(key, await manifestOf(key, accepted.body.job_id));
  }, 300_000);

  it('402 when the valid lines do not fit the quota: nothing started, nothing charged', async () => {
    const key = await createKey('free');
    const used = await quotaUsed(key);
    const response = await call(key, 'POST', '/v1/pdf/bulk', { items: Array.from({ length: 1_000 }, (_, i) => invoice(i)) });
    expectApiError(response, 402, 'quota_exceeded');
    expect(await quotaUsed(key)).toBe(used);
    expect(await listedIds(key)).toEqual([]);
  });

  it('a chunk delivered twice is rendered and charged once', async () => {
    // Arrange: 20 lines (two chunks of ten, whose bytes are the items as sent, one per line)
    const key = await createKey('pro');
    const items = Array.from({ length: 20 }, (_, i) => invoice(i + 1, { options: { wait_delay_ms: 100 } }));
    const lines = items.map((item) => Buffer.byteLength(JSON.stringify(item)) + 1);
    const offset = (line: number) => lines.slice(0, line - 1).reduce((sum, bytes) => sum + bytes, 0);
    const info = JSON.parse(readFileSync(join(inject('dataDir'), 'stack.json'), 'utf8')) as { sqsEndpoint: string; region: string };
    const sqs = new SQSClient({ endpoint: info.sqsEndpoint, region: info.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'pdf-api-bulk' }));

    // Act: submit, then deliver both chunks again, as SQS's at-least-once may
    const accepted = await call(key, 'POST', '/v1/pdf/bulk', { items });
    const chunks = [0, 1].map((chunk) => ({ job_id: accepted.body.job_id, chunk, first: chunk * 10 + 1, last: chunk * 10 + 10, start: offset(chunk * 10 + 1), end: offset(chunk * 10 + 11) - 1 }));
    await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: chunks.map((chunk) => ({ Id: String(chunk.chunk), MessageBody: JSON.stringify(chunk), MessageGroupId: key.keyId })) }));
    await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: chunks.map((chunk) => ({ Id: String(chunk.chunk), MessageBody: JSON.stringify(chunk), MessageGroupId: key.keyId })) }));
    const job = await waitForEnd(key, accepted.body.job_id);
    await sleep(2_000); // the duplicates still in the queue find the job ended

    // Assess
    sqs.destroy();
    expect(job).toMatchObject({ status: 'succeeded', succeeded: 20, failed: 0 });
    const manifest = await manifestOf(key, accepted.body.job_id);
    expect(manifest).toHaveLength(20);
    await expectExact(key, manifest);
    expect(await quotaUsed(key)).toBe(20);
  }, 300_000);

  it('a cancelled job starts no more lines, keeps what it stored and gives the rest of its reservation back', async () => {
    // Arrange: 60 slow lines
    const key = await createKey('pro');
    const items = Array.from({ length: 60 }, (_, i) => invoice(i + 1, { options: { wait_delay_ms: 300 } }));
    const accepted = await call(key, 'POST', '/v1/pdf/bulk', { items });
    expect(await quotaUsed(key)).toBe(60); // reserved at submission
    for (let progress = 0; progress < 3; await sleep(200)) progress = (await call(key, 'GET', `/v1/jobs/${accepted.body.job_id}`)).body.succeeded;

    // Act
    const cancelled = await call(key, 'DELETE', `/v1/jobs/${accepted.body.job_id}`);
    const job = await waitForEnd(key, accepted.body.job_id);

    // Assess
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    expect(job.status).toBe('cancelled');
    expect(job.succeeded).toBeLessThan(60);
    expect(job.succeeded + job.failed).toBe(60);
    const manifest = await manifestOf(key, accepted.body.job_id);
    expect(manifest.filter((line) => !line.success).every((line) => line.error.code === 'CANCELLED')).toBe(true);
    await expectExact(key, manifest);
  }, 300_000);

  it('runs an uploaded job (BOM, CRLF) of html, url and template lines under shared options, and writes the ZIP of every stored PDF', async () => {
    // Arrange: a template, and an upload whose shared options include one for url documents only
    const key = await createKey('pro');
    const template = await call(key, 'POST', '/v1/templates', { name: 'Certificate', html: '<h1>Certificate for {{ name }}</h1>' });
    expect(template.status).toBe(201);
    const lines = [
      { html: '<h1>Invoice 1</h1>', options: { filename: 'invoice-1.pdf' }, metadata: { n: 1 } },
      { url: `${inject('publicSite')}/page`, metadata: { n: 2 } },
      { template_id: template.body.template_id, data: { name: 'Ada' }, metadata: { n: 3 } },
      { html: '<h1>Invoice 4</h1>', options: { filename: 'invoice-1.pdf' } },
      { html: '' },
    ];
    const file = '\ufeff' + lines.map((line) => JSON.stringify(line)).join('\r\n') + '\r\n';
    const upload = await call(key, 'POST', '/v1/uploads');
    const put = await fetch(upload.body.url, { method: 'PUT', body: file });

    // Act
    const accepted = await call(key, 'POST', '/v1/pdf/bulk', {
      upload_id: upload.body.upload_id,
      options: { format: 'A5', http_headers: { 'X-Bulk-Job': 'yes' } },
      archive: true,
      skip_invalid: true,
    });
    const job = await waitForEnd(key, accepted.body.job_id);
    const manifest = await manifestOf(key, accepted.body.job_id);
    const archive = await call(key, 'GET', `/v1/jobs/${accepted.body.job_id}/archive`);
    const entries = await zipEntries(await download(archive.headers.get('location')!));

    // Assess
    expect(upload.status).toBe(201);
    expect(upload.body.upload_id).toMatch(/^upl_/);
    expect(put.status).toBe(200);
    expect(accepted.status).toBe(202);
    expect(job).toMatchObject({ status: 'succeeded', total: 5, succeeded: 4, failed: 1 });
    expect(job.result.archive_url).toBe(`${new URL(job.result.manifest_url).origin}/v1/jobs/${accepted.body.job_id}/archive`);
    expect(manifest.map((line) => [line.line, line.success])).toEqual([[1, true], [2, true], [3, true], [4, true], [5, false]]);
    expect(manifest[4].error.code).toBe('INVALID_HTML');
    expect(manifest.map((line) => line.metadata?.n)).toEqual([1, 2, 3, undefined, undefined]);
    // Every stored PDF, by its filename (the second invoice-1.pdf told apart by its line) or its line number.
    expect(entries.map((entry) => entry.name)).toEqual(['invoice-1.pdf', '000002.pdf', '000003.pdf', 'invoice-1 (line 4).pdf']);
    expect(entries[0]!.text).toContain('Invoice 1');
    expect(entries[2]!.text).toContain('Certificate for Ada');
    expect(entries[3]!.text).toContain('Invoice 4');
    await expectExact(key, manifest);
  }, 300_000);

  it("renders every template line in the version that was latest when the job was submitted, whatever is saved while it runs", async () => {
    // Arrange: a template, and a job of 12 of its lines (two chunks; each line waits half a second,
    // so the job is still running when version 2 is saved)
    const key = await createKey('pro');
    const template = await call(key, 'POST', '/v1/templates', { name: 'Notice', html: '<h1>Notice v1 for {{ name }}</h1>' });
    const items = Array.from({ length: 12 }, (_, i) => ({ template_id: template.body.template_id, data: { name: `P${i + 1}` }, options: { wait_delay_ms: 500 } }));

    // Act: version 2 is saved right after the job was accepted
    const accepted = await call(key, 'POST', '/v1/pdf/bulk', { items });
    const saved = await call(key, 'PUT', `/v1/templates/${template.body.template_id}`, { name: 'Notice', html: '<h1>Notice v2 for {{ name }}</h1>' });
    const job = await waitForEnd(key, accepted.body.job_id);
    const manifest = await manifestOf(key, accepted.body.job_id);

    // Assess: the job started before version 2 was saved, which then applied to none of its lines
    expect(accepted.status).toBe(202);
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.version).toBe(2);
    expect(job).toMatchObject({ status: 'succeeded', total: 12, succeeded: 12 });
    for (const line of manifest) {
      const text = (await readPdfText(await download(line.download_url))).map((page) => page.text).join('\n');
      expect(text, `line ${line.line}`).toContain(`Notice v1 for P${line.line}`);
    }
    await expectExact(key, manifest);
  }, 300_000);

  it('refuses an archive of more lines than one worker can write, and options no document takes, before reading further', async () => {
    const key = await createKey('pro');
    const upload = await call(key, 'POST', '/v1/uploads');
    await fetch(upload.body.url, { method: 'PUT', body: '{"html":"x"}\n'.repeat(100_001) });

    const tooLarge = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: upload.body.upload_id, archive: true });
    const badOptions = await call(key, 'POST', '/v1/pdf/bulk', { items: [invoice(1)], options: { format: 'A9' } });
    const notUploaded = await call(key, 'POST', '/v1/pdf/bulk', { upload_id: 'upl_' + 'x'.repeat(24) });

    expect(expectApiError(tooLarge, 400, 'invalid_request')).toContain('at most 100000 lines');
    expect(expectApiError(badOptions, 400, 'invalid_request')).toMatch(/^options: /);
    expect(expectApiError(notUploaded, 400, 'invalid_request')).toContain('No file was uploaded');
    expect(await quotaUsed(key)).toBe(0);
  }, 120_000);

  it('is fair between keys: a small job sent after a large one of another key finishes first', async () => {
    const [large, small] = [await createKey('enterprise'), await createKey('pro')];
    // The large job's lines are few but slow (wait_delay_ms waits without using the CPU): it is still
    // running when the small one ends, at half the renders of twice the lines.
    const largeJob = await call(large, 'POST', '/v1/pdf/bulk', { items: Array.from({ length: 30 }, (_, i) => invoice(i + 1, { options: { wait_delay_ms: 600 } })) });
    await sleep(1_000);
    const smallJob = await call(small, 'POST', '/v1/pdf/bulk', { items: Array.from({ length: 10 }, (_, i) => invoice(i + 1)) });

    const smallEnded = await waitForEnd(small, smallJob.body.job_id);
    const largeNow = await call(large, 'GET', `/v1/jobs/${largeJob.body.job_id}`);
    const largeEnded = await waitForEnd(large, largeJob.body.job_id);

    expect(smallEnded).toMatchObject({ status: 'succeeded', succeeded: 10 });
    expect(largeNow.body.completed_at).toBeUndefined();
    expect(Date.parse(smallEnded.completed_at)).toBeLessThan(Date.parse(largeEnded.completed_at));
    console.info(`fairness: the 10-line job ended when the 30-line job had ${largeNow.body.succeeded} of 30 done`);
  }, 300_000);
});
