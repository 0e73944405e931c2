/**
 * Jobs that always end (issue #30): a key's asynchronous jobs take at most its tier's share of the
 * renderer and wait in its own line, every wait of a job's document obeys its render time limit
 * (not a library's default), and a job whose every try failed is ended at once, uncharged, with its
 * webhook, by the same path Lambda's failure destination takes in AWS.
 *
 * A local stack of this file's own (test/support/private-stack.ts) with four render slots and a job
 * render time limit of 10 s (JOB_RENDER_TIMEOUT_MS, the deployment's ceiling over the tiers' own
 * limits), so that never-ready documents end in seconds rather than the tiers' minutes. What these
 * tests wait for are events (a job's end, a webhook, a try reaching the fixture site), never a
 * duration a slower host would miss.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { getBrowser } from '#lib/render/browser.ts';
import { request, requestsReceivedBy, runKeyTool, type ApiResponse } from '../support/api.ts';
import { rendererPids, startPrivateStack, until, type PrivateStack } from '../support/private-stack.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const JOB_RENDER_TIMEOUT_MS = 10_000;
const SLOTS = 4;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('jobs that always end', () => {
  const receiver = new WebhookReceiver();
  /** The webhooks received at `path`, as their JSON bodies. */
  const received = (path: string) => (receiver.deliveries.get(path) ?? []).map((delivery) => JSON.parse(delivery.body) as { type: string; data: { job_id: string; status: string } });
  let service: PrivateStack;

  const call = (method: string, path: string, apiKey: string, body?: unknown): Promise<ApiResponse> =>
    request(method, service.apiUrl + path, { apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });
  const submit = async (apiKey: string, body: Record<string, unknown>): Promise<string> => {
    const submitted = await call('POST', '/v1/pdf/generate', apiKey, { ...body, async: true });
    expect(submitted.status).toBe(202);
    return submitted.body.job_id as string;
  };
  const jobOf = async (apiKey: string, id: string) => (await call('GET', `/v1/jobs/${id}`, apiKey)).body;
  const ended = async (apiKey: string, ids: string[], timeoutMs: number) => {
    const jobs = new Map<string, any>();
    await until(async () => {
      for (const id of ids.filter((id) => !jobs.has(id))) {
        const job = await jobOf(apiKey, id);
        if (job.status === 'succeeded' || job.status === 'failed') jobs.set(id, job);
      }
      return jobs.size === ids.length;
    }, timeoutMs);
    return ids.map((id) => jobs.get(id));
  };
  const listed = async (apiKey: string) => ((await call('GET', '/v1/pdf?limit=100', apiKey)).body.data as unknown[]).length;

  beforeAll(async () => {
    await receiver.start();
    service = await startPrivateStack({
      RENDER_CONCURRENCY: String(SLOTS),
      JOB_RENDER_TIMEOUT_MS: String(JOB_RENDER_TIMEOUT_MS),
      WEBHOOK_DISPATCH_INTERVAL_MS: '200',
      PDF_ALLOW_PRIVATE_HOSTS: [process.env.PDF_ALLOW_PRIVATE_HOSTS, receiver.host].filter(Boolean).join(','),
    });
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    receiver.server?.close();
  });

  it("four never-ready jobs of a free key hold at most its share of renderers (2), end render_timeout within their limit, uncharged, webhooks sent; another key's requests are served meanwhile", async () => {
    // Prepare
    const free = await service.createKey('free');
    const other = await service.createKey('pro');
    const never = [
      { html: '<p>never ready</p>', wait_for_expression: 'false' },
      { html: '<p>never ready</p>', wait_for_selector: '#never' },
      { html: '<p>never ready</p>', wait_for_expression: 'window.ready === true' },
      { html: '<p>never ready</p>', wait_for_selector: '.not-there' },
    ];
    const ids = await Promise.all(never.map((body, i) => submit(free, { ...body, webhook_url: `${receiver.origin}/never-${i}` })));
    await until(async () => (await request('GET', `${service.apiUrl}/health`)).body.rendering?.running >= 1, 10_000);

    // Act: the other key's single documents while the free key's jobs wait for conditions that never hold
    const answers: { status: number; ms: number }[] = [];
    for (let i = 0; i < 4; i++) {
      const started = performance.now();
      const answer = await service.generate(other, { html: `<h1>Served ${i}</h1>` });
      answers.push({ status: answer.status, ms: performance.now() - started });
    }
    const health = (await request('GET', `${service.apiUrl}/health`)).body;
    // Served while the free key's jobs were still waiting: not after them (a job's end is its webhook).
    const stillWaiting = never.filter((_, i) => received(`/never-${i}`).length === 0).length;
    // Their ends, as their webhooks tell them (polling the jobs would spend the free key's 10 requests a minute).
    await until(() => never.every((_, i) => received(`/never-${i}`).length >= 1), 4 * JOB_RENDER_TIMEOUT_MS + 60_000);
    const jobs = never.map((_, i) => received(`/never-${i}`)[0]!.data as unknown as { job_id: string; status: string; result: { error: { code: string; message: string } } });

    // Assess
    console.info(`other key's documents while the free key's jobs waited: ${answers.map((a) => `${a.status} in ${Math.round(a.ms)} ms`).join(', ')}; ${stillWaiting} jobs still waiting then`);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    // Each of them while the never-ready jobs held their renderers, not after a wait for them to end.
    expect(stillWaiting).toBeGreaterThan(0);
    // The free key's jobs held at most its share (2) of the four slots: the other key's documents had theirs.
    expect(health.rendering).toMatchObject({ slots: SLOTS, running: expect.any(Number) });
    expect(health.rendering.running).toBeLessThanOrEqual(2);
    expect(jobs.map((job) => job.job_id)).toEqual(ids);
    for (const job of jobs) {
      expect(job.status).toBe('failed');
      expect(job.result.error.code).toBe('render_timeout');
      expect(job.result.error.message).toMatch(/never (held|became true)|matched no visible element/);
      // Within the job render limit, as its message says: never a library's minutes-long default.
      expect(job.result.error.message).toContain(`within the render time limit of ${JOB_RENDER_TIMEOUT_MS} ms`);
    }
    expect(await service.quotaUsed(free)).toBe(0);
    expect(await listed(free)).toBe(0);
    for (const [i] of never.entries()) expect(received(`/never-${i}`)).toEqual([expect.objectContaining({ type: 'pdf.job.failed' })]);
  }, 240_000);

  it('twice as many jobs as render slots, each waiting 5.5 s (wait_delay_ms: 5500), all end, every one stored and charged once', async () => {
    // Prepare: more than the slots could take at once, each holding its slot longer than a request
    // may wait for one (5 s), within the job render limit's time for waiting (10 s less its print
    // reserve): the second half can only end by waiting in line as jobs
    const careless = await service.createKey('pro');
    const count = 2 * SLOTS;

    // Act
    const ids = await Promise.all(Array.from({ length: count }, (_, i) => submit(careless, { html: `<h1>Statement ${i}</h1>`, wait_delay_ms: 5_500 })));
    const jobs = await ended(careless, ids, 180_000);

    // Assess
    expect(jobs.map((job) => job.status)).toEqual(Array(count).fill('succeeded'));
    expect(await service.quotaUsed(careless)).toBe(count);
    expect(await listed(careless)).toBe(count);
  }, 240_000);

  it('a job whose renderer is killed on every try ends failed at once, uncharged, its webhook sent', async () => {
    // Prepare: a document that tells the fixture site when each try has it in a renderer (its image
    // is asked for), then waits for a condition that never holds
    const key = await service.createKey('starter');
    const browser = await getBrowser();
    const site = inject('publicSite');
    const marker = `crashing-job-${Date.now()}`;
    const id = await submit(key, { html: `<p>crashes</p><img src="${site}/page?${marker}">`, wait_for_expression: 'window.never === true', webhook_url: `${receiver.origin}/crashed` });
    const triesSeen = async () => (await requestsReceivedBy(site)).filter((path) => path.includes(marker)).length;

    // Act: each try's renderer killed once the try has the document, as an out-of-memory kill would:
    // the kill comes at the event, long before the try's time limit, on any host
    let killed = 0;
    let job = await jobOf(key, id);
    while (job.status !== 'succeeded' && job.status !== 'failed') {
      if ((await triesSeen()) > killed) {
        for (const pid of rendererPids(browser.process()!.pid!)) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
        killed++;
      }
      await sleep(100);
      job = await jobOf(key, id);
    }

    // Assess
    expect(job.status).toBe('failed');
    expect(job.result.error.code).toBe('render_failed');
    // Every try crashed (none ran out of time): as many tries as kills.
    expect(job.result.error.message).toMatch(new RegExp(`each of its ${killed} tries`));
    expect(await service.quotaUsed(key)).toBe(0);
    await until(() => received('/crashed').length >= 1, 20_000);
    expect(received('/crashed')).toEqual([expect.objectContaining({ type: 'pdf.job.failed', data: expect.objectContaining({ job_id: id, status: 'failed' }) })]);
  }, 120_000);

  it('a job of a key revoked before its next run fails unauthorized, uncharged, and says so in its webhook', async () => {
    // Prepare: a job whose first run is under way
    const created = await runKeyTool(['create', '--tier', 'starter', '--json'], { DATA_DIR: service.dataDir });
    const { api_key: key, key_id: keyId } = JSON.parse(created.stdout) as { api_key: string; key_id: string };
    const browser = await getBrowser();
    const id = await submit(key, { html: '<p>for a revoked key</p>', wait_for_expression: 'window.never === true', webhook_url: `${receiver.origin}/revoked` });
    await until(async () => (await jobOf(key, id)).status === 'running', 10_000);

    // Act: the key revoked, then the run's renderer killed, so that Lambda runs the job again
    expect((await runKeyTool(['revoke', keyId], { DATA_DIR: service.dataDir })).code).toBe(0);
    for (const pid of rendererPids(browser.process()!.pid!)) process.kill(pid, 'SIGKILL');

    // Assess: the next run ends it without rendering (the revoked key can no longer read it: its webhook tells)
    await until(() => received('/revoked').length >= 1, 30_000);
    const [delivery] = received('/revoked');
    expect(delivery).toMatchObject({ type: 'pdf.job.failed', data: { job_id: id, status: 'failed', result: { error: { code: 'unauthorized' } } } });
    expect((await call('GET', `/v1/jobs/${id}`, key)).status).toBe(401);
  }, 60_000);
});
