/**
 * Webhook deliveries are fair between API keys and judged on the receiver's status (issue #30):
 * one key's receivers that never answer cannot keep another key's due retry waiting, and a
 * receiver that answers 200 at once but trickles its body is delivered to once.
 *
 * The stack is a child process (`node lib/local/start.ts`, as in jobs.test.ts) with the default
 * WEBHOOK_TIMEOUT_MS (10 s) and sender limits, a retry schedule of 5 s then 300 s, and its due list
 * read five times a second; the receivers are loopback servers allowed by PDF_ALLOW_PRIVATE_HOSTS.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killStackProcess, startStackProcess, type StackProcess } from '../../bench/lib/stack-process.ts';
import { createKeyIn, request, savedEnvironment } from '../support/api.ts';

interface Arrival {
  readonly id: string;
  readonly at: number;
}

/**
 * The receivers, by path: `/hang` never answers, `/flaky` answers 500 then 200, `/trickle` answers
 * 200 at once and then sends its body a byte every 200 ms for 12 s (longer than a try may take).
 */
class Receivers {
  readonly arrivals = new Map<string, Arrival[]>();
  server!: Server;
  origin!: string;
  private flakyAnswers = [500];

  async start(): Promise<void> {
    this.server = createServer((incoming, response) => {
      incoming.resume();
      incoming.on('end', () => {
        const path = incoming.url ?? '/';
        this.arrivals.set(path, [...this.received(path), { id: String(incoming.headers['webhook-id']), at: Date.now() }]);
        if (path === '/hang') return;
        if (path === '/flaky') return void response.writeHead(this.flakyAnswers.shift() ?? 200).end();
        response.writeHead(200, { 'Content-Type': 'text/plain' });
        response.flushHeaders();
        const drip = setInterval(() => response.write('.'), 200);
        const end = setTimeout(() => response.end(), 12_000);
        response.on('close', () => {
          clearInterval(drip);
          clearTimeout(end);
        });
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  received(path: string): Arrival[] {
    return this.arrivals.get(path) ?? [];
  }

  close(): void {
    this.server?.closeAllConnections();
    this.server?.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('webhook deliveries between API keys', () => {
  const receivers = new Receivers();
  const environment = savedEnvironment();
  let dataDir: string;
  let stack: StackProcess;

  const makeKey = async () => (await createKeyIn(dataDir, 'pro')).apiKey;
  const submit = async (apiKey: string, html: string, path: string) => {
    const submitted = await request('POST', `${stack.info.apiUrl}/v1/pdf/generate`, {
      apiKey,
      body: JSON.stringify({ html, async: true, webhook_url: receivers.origin + path }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(submitted.status).toBe(202);
  };

  beforeAll(async () => {
    await receivers.start();
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-webhook-fairness-'));
    process.env.PDF_ALLOW_PRIVATE_HOSTS = [environment.saved.PDF_ALLOW_PRIVATE_HOSTS, new URL(receivers.origin).host].filter(Boolean).join(',');
    process.env.WEBHOOK_RETRY_SCHEDULE = '5,300';
    process.env.WEBHOOK_DISPATCH_INTERVAL_MS = '200';
    for (const name of ['WEBHOOK_TIMEOUT_MS', 'WEBHOOK_CONCURRENCY', 'WEBHOOK_CONCURRENCY_PER_KEY']) delete process.env[name];
    stack = await startStackProcess(dataDir);
  }, 90_000);

  afterAll(async () => {
    if (stack) await killStackProcess(stack);
    environment.restore();
    receivers.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a receiver that answers 200 at once and trickles its body for longer than a try may take is delivered to once', async () => {
    await submit(await makeKey(), '<p>trickled</p>', '/trickle');
    const [first] = await until('the delivery', () => (receivers.received('/trickle').length ? receivers.received('/trickle') : undefined), 30_000);
    // Judged failed at the 10 s deadline, it would be tried again 5 s later.
    await sleep(first!.at + 17_000 - Date.now());
    expect(receivers.received('/trickle')).toHaveLength(1);
  }, 60_000);

  it('one key’s 40 receivers that never answer do not delay another key’s retry by more than a few seconds', async () => {
    // Prepare: key A's 40 jobs, every webhook to a receiver that hangs until each try's 10 s are up.
    const keyA = await makeKey();
    const keyB = await makeKey();
    for (let n = 0; n < 40; n++) await submit(keyA, `<p>A ${n}</p>`, '/hang');
    // Every first try made (and hanging), and the retries of the first ones under way: A has a
    // delivery due or being tried from now until long after B's retry.
    await until('the first tries of A’s 40 deliveries, and their first retries', () => {
      const tries = receivers.received('/hang');
      return new Set(tries.map((t) => t.id)).size === 40 && tries.length >= 42 ? true : undefined;
    }, 90_000);

    // Act: key B's job, whose receiver fails its first try; the retry is due 5 s after.
    await submit(keyB, '<p>B</p>', '/flaky');
    const [first, retry] = await until('B’s retry', () => (receivers.received('/flaky').length >= 2 ? receivers.received('/flaky') : undefined), 60_000);

    // Assess: the retry came when it was due, give or take a few seconds, not after A's backlog.
    const dueAt = first!.at + 5_000;
    expect(retry!.at).toBeGreaterThanOrEqual(dueAt - 500);
    expect(retry!.at - dueAt).toBeLessThan(5_000);
    expect(retry!.id).toBe(first!.id);
    await sleep(1_000);
    expect(receivers.received('/flaky')).toHaveLength(2);
  }, 180_000);
});
