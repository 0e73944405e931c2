/**
 * A bulk job across kill -9 (issue #32): the whole local stack is killed with SIGKILL three times
 * while a bulk job of 120 lines runs, each time once the job has counted more lines since the last
 * restart and while a chunk is half done (PDFs stored that no finished chunk counts yet), and
 * started again on the same data each time. The job resumes from the queue after every restart and ends with
 * exactly one manifest line per input line, quota used == PDFs listed == downloadable == manifest
 * successes (no PDF charged twice), and its webhook delivered once.
 *
 * The stack is a child process of this file's own (`node lib/local/start.ts`, as `npm start` runs),
 * on a data directory of its own; the shared test stack is never touched.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killStackProcess, startStackProcess, type StackProcess } from '../../bench/lib/stack-process.ts';
import { createKeyIn, download, request, savedEnvironment, type ApiResponse } from '../support/api.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const LINES = 120;
const KILLS = 3;
/** Lines the job's progress must have counted since the last kill (its run since the last restart) before the next. */
const LINES_BETWEEN_KILLS = 10;
/** The one invalid line, skipped. */
const INVALID_LINE = 41;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a bulk job across kill -9', () => {
  const environment = savedEnvironment();
  const receiver = new WebhookReceiver();
  let dataDir: string;
  let stack: StackProcess | undefined;
  let apiKey: string;

  const call = (method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    request(method, stack!.info.apiUrl + path, { apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });

  async function listedIds(): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call('GET', `/v1/pdf?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      ids.push(...(page.body.data as { id: string }[]).map((record) => record.id));
      cursor = page.body.next_cursor ?? undefined;
    } while (cursor);
    return ids;
  }

  /** The job as GET /v1/jobs shows it, once `condition` holds (polled through restarts' short outages). */
  async function jobWhen(jobId: string, condition: (job: any) => boolean, what: string, timeoutMs = 180_000): Promise<any> {
    const giveUpAt = Date.now() + timeoutMs;
    for (;;) {
      const job = await call('GET', `/v1/jobs/${jobId}`).catch(() => undefined);
      if (job?.status === 200 && condition(job.body)) return job.body;
      if (Date.now() > giveUpAt) throw new Error(`job ${jobId}: ${what} did not happen: ${JSON.stringify(job?.body)}`);
      await sleep(200);
    }
  }

  beforeAll(async () => {
    await receiver.start();
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-bulk-crash-'));
    process.env.PDF_ALLOW_PRIVATE_HOSTS = [environment.saved.PDF_ALLOW_PRIVATE_HOSTS, receiver.host].filter(Boolean).join(',');
    process.env.WEBHOOK_DISPATCH_INTERVAL_MS = '200';
    stack = await startStackProcess(dataDir);
    ({ apiKey } = await createKeyIn(dataDir, 'pro'));
  }, 90_000);

  afterAll(async () => {
    if (stack) await killStackProcess(stack);
    environment.restore();
    receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('resumes after each of three kills and ends exact: one manifest line per input line, each PDF charged once, one webhook', async () => {
    // Arrange: 120 small invoices (one line invalid, skipped), each taking a moment to print
    const template = await call('POST', '/v1/templates', { name: 'Receipt', html: '<h1>Receipt {{ n }}</h1>' });
    expect(template.status).toBe(201);
    const items = Array.from({ length: LINES }, (_, i) => {
      const n = i + 1;
      if (n === INVALID_LINE) return { html: '<p>x</p>', colour: 'red' };
      if (n % 10 === 0) return { template_id: template.body.template_id, data: { n }, metadata: { n } };
      return { html: `<h1>Invoice ${n}</h1>`, options: { wait_delay_ms: 400 }, metadata: { n } };
    });
    const accepted = await call('POST', '/v1/pdf/bulk', { items, skip_invalid: true, webhook_url: receiver.hook('hook') });
    expect(accepted.status).toBe(202);
    const jobId = accepted.body.job_id as string;

    // Act: kill -9 the whole stack three times as the job advances, starting it again each time
    const kills: { counted: number; stored: number }[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      // The job went on after the last restart: more lines counted since.
      const wanted = (kills.at(-1)?.counted ?? 0) + LINES_BETWEEN_KILLS;
      await jobWhen(jobId, (body) => body.succeeded >= wanted || body.completed_at !== undefined, `${wanted} lines stored`);
      // Killed mid-chunk: PDFs stored that no finished chunk counts yet, which the resumed run must find, not make again.
      let job: any;
      let listed = 0;
      const giveUpAt = Date.now() + 30_000;
      do {
        job = (await call('GET', `/v1/jobs/${jobId}`)).body;
        listed = (await listedIds()).length;
      } while (listed <= job.succeeded && job.completed_at === undefined && Date.now() < giveUpAt);
      expect(job.completed_at, 'the job ended before a kill: make its lines slower').toBeUndefined();
      kills.push({ counted: job.succeeded, stored: listed });
      await killStackProcess(stack!);
      stack = await startStackProcess(dataDir);
    }
    const ended = await jobWhen(jobId, (body) => body.completed_at !== undefined, 'the end', 240_000);
    // Deliveries are tried every 200 ms: time enough for a second one, were there one.
    await sleep(3_000);

    // Assess: the job resumed after every kill and ended with every line accounted for
    console.info(`bulk crash: killed with ${kills.map((kill) => `${kill.stored} PDFs stored, ${kill.counted} counted`).join('; ')} of ${LINES} lines`);
    expect(kills.every((kill) => kill.stored > kill.counted)).toBe(true);
    expect(ended).toMatchObject({ status: 'succeeded', total: LINES, succeeded: LINES - 1, failed: 1, result: { succeeded: LINES - 1, failed: 1 } });
    const manifestRedirect = await call('GET', `/v1/jobs/${jobId}/manifest`);
    expect(manifestRedirect.status).toBe(302);
    const manifest = (await (await fetch(manifestRedirect.headers.get('location')!)).text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(manifest.map((line) => line.line)).toEqual(Array.from({ length: LINES }, (_, i) => i + 1));
    expect(manifest.filter((line) => !line.success).map((line) => line.line)).toEqual([INVALID_LINE]);
    expect(manifest.filter((line) => line.success).map((line) => line.metadata.n)).toEqual(Array.from({ length: LINES }, (_, i) => i + 1).filter((n) => n !== INVALID_LINE));
    // quota used == PDFs listed == manifest successes, each a different PDF: none charged twice
    const successes = manifest.filter((line) => line.success).map((line) => line.pdf_id as string);
    expect(new Set(successes).size).toBe(successes.length);
    expect((await listedIds()).sort()).toEqual([...successes].sort());
    expect((await call('GET', '/v1/usage')).body.quota_used).toBe(successes.length);
    // ... == downloadable (the links name the stack the job was submitted to; each restart listens on a new port)
    const here = (url: string) => stack!.info.apiUrl + new URL(url).pathname + new URL(url).search;
    for (const line of manifest.filter((entry) => entry.success)) expect(Buffer.from(await download(here(line.download_url))).subarray(0, 5).toString(), `line ${line.line}`).toBe('%PDF-');
    // The webhook, once
    const webhooks = receiver.received('hook').map((delivery) => ({ id: String(delivery.headers['webhook-id']), body: JSON.parse(delivery.body) }));
    expect(webhooks.map((hook) => hook.body.data.job_id)).toEqual([jobId]);
    expect(webhooks[0]!.body).toMatchObject({ type: 'pdf.job.completed', data: { job_id: jobId, status: 'succeeded', succeeded: LINES - 1, failed: 1 } });
  }, 600_000);
});
