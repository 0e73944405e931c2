/**
 * Joining a batch's PDFs runs in a merge worker (lib/documents/pdf-workers.ts, issue #39), through the
 * local stack: while one key's large merge is under way, another key's document prints and /health
 * answers. The items are made to be costly to join within the test stack's limits (50 pages, 8 MB):
 * dense with links, each an object pdf-lib parses and copies, so joining them takes seconds of CPU
 * that the event loop would otherwise spend in one block per item. Asserted by the order of events
 * (the neighbour and /health answered while the batch's job was still joining), never by a duration.
 */
import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { createKey, download, generate, quotaUsed, request, type ApiResponse, type TestKey } from '../support/api.ts';

const ITEMS = 3;
const PAGES = 12;

/** A page of 300 links in small print: about 0.2 MB of PDF, thousands of objects per item. */
const denseHtml = (item: number) => `<!doctype html><html lang="en"><style>section { break-after: page; font-size: 6px } a { margin: 0 1px }</style><body>
${Array.from({ length: PAGES }, (_, page) => `<section>${Array.from({ length: 300 }, (_, n) => `<a href="https://example.com/${item}/${page}/${n}">${n}</a>`).join(' ')}</section>`).join('')}
</body></html>`;

const json = (method: string, path: string, apiKey: string, body?: unknown): Promise<ApiResponse> =>
  request(method, path, { apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });

/** Resolves once `key` has `count` PDFs stored: a batch's items are stored before they are joined. */
async function untilStored(key: TestKey, count: number, jobId: string): Promise<void> {
  for (;;) {
    const listed = await json('GET', '/v1/pdf?limit=100', key.apiKey);
    expect(listed.status).toBe(200);
    if (listed.body.data.length >= count) return;
    const job = await json('GET', `/v1/jobs/${jobId}`, key.apiKey);
    if (job.body.status !== 'queued' && job.body.status !== 'running') throw new Error(`the job ended before its items were seen stored: ${job.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The job's view once it has ended. */
async function ended(key: TestKey, jobId: string): Promise<any> {
  for (;;) {
    const job = await json('GET', `/v1/jobs/${jobId}`, key.apiKey);
    expect(job.status).toBe(200);
    if (job.body.status !== 'queued' && job.body.status !== 'running') return job.body;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('a large merge', () => {
  it('leaves another key’s documents and /health answering while it joins, and joins every item’s pages', async () => {
    // Prepare
    const [merging, neighbour] = await Promise.all([createKey('pro'), createKey('pro')]);

    // Act: the batch (as a job: the merge then has the job's time, whatever the host's speed), and
    // once its items are stored and joining them begins, /health and the neighbour's document
    const submitted = await json('POST', '/v1/pdf/batch', merging.apiKey, { merge: true, async: true, pdfs: Array.from({ length: ITEMS }, (_, item) => ({ html: denseHtml(item) })) });
    expect(submitted.status).toBe(202);
    const jobId = submitted.body.job_id as string;
    await untilStored(merging, ITEMS, jobId);
    const health = await request('GET', '/health');
    const plain = await generate(neighbour.apiKey, { html: '<!doctype html><p>Business as usual</p>' });
    const meanwhile = await json('GET', `/v1/jobs/${jobId}`, merging.apiKey);
    const job = await ended(merging, jobId);

    // Assess: the neighbour and /health answered while the batch was still joining its items
    expect(health.status).toBe(200);
    expect(plain.status).toBe(200);
    expect(meanwhile.body.status).toBe('running');
    // Assess: the merged file has every item's pages, the items charged, the merged file not
    expect(job).toMatchObject({ status: 'succeeded', result: { successful: ITEMS, merged: { pages: ITEMS * PAGES } } });
    expect(job.result.merge_error).toBeUndefined();
    const file = await PDFDocument.load(await download(job.result.merged.url));
    expect(file.getPageCount()).toBe(ITEMS * PAGES);
    expect(await quotaUsed(merging)).toBe(ITEMS);
  }, 240_000);
});
