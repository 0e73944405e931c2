/**
 * "Testing webhooks locally" (docs/async-and-webhooks.md) followed as a developer would: the stack
 * started as `npm start` starts it, with the receiver's host:port in PDF_ALLOW_PRIVATE_HOSTS, the
 * refusal of a receiver it does not list naming that setting, a key from the key tool, and the
 * documented receiver (examples/webhook-receiver/receiver.mjs, the very file the page shows) run as
 * its own process, verifying the delivery's signature and refusing one signed with another secret.
 *
 * Then the words of the next start-up after a clean stop (SIGTERM) and after a kill (SIGKILL), with
 * a job request left behind each time: only a kill is called one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOB_REQUEST_PREFIX } from '#lib/jobs/job-records.ts';
import { killStackProcess, REPO_ROOT, startStackProcess, stopStackProcess, type StackProcess } from '../../bench/lib/stack-process.ts';
import { createKeyIn, request } from '../support/api.ts';
import { readPdf } from '../support/pdf.ts';

const RECEIVER = 'examples/webhook-receiver/receiver.mjs';

/** A port free now, as a developer picks one for the receiver before starting the stack that lists it. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A child's standard output, line by line, and a way to wait for the first line that matches. */
function lines(child: ChildProcess): { readonly all: string[]; next(pattern: RegExp): Promise<RegExpMatchArray> } {
  const all: string[] = [];
  const waiting: { pattern: RegExp; resolve: (match: RegExpMatchArray) => void }[] = [];
  let rest = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    rest += chunk.toString();
    const complete = rest.split('\n');
    rest = complete.pop()!;
    for (const line of complete) {
      all.push(line);
      for (const waiter of [...waiting]) {
        const match = line.match(waiter.pattern);
        if (match) waiting.splice(waiting.indexOf(waiter), 1), waiter.resolve(match);
      }
    }
  });
  return {
    all,
    next: (pattern) =>
      new Promise((resolve) => {
        const seen = all.map((line) => line.match(pattern)).find(Boolean);
        if (seen) resolve(seen);
        else waiting.push({ pattern, resolve });
      }),
  };
}

describe('Testing webhooks locally, as docs/async-and-webhooks.md says', () => {
  let dataDir: string;
  let stack: StackProcess;
  let port: number;
  let key: { apiKey: string; webhookSecret: string };
  let receiver: ChildProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-webhooks-locally-'));
    port = await freePort();
    // `PDF_ALLOW_PRIVATE_HOSTS=127.0.0.1:8765 npm start`, with the port this run picked.
    stack = await startStackProcess(dataDir, undefined, { PDF_ALLOW_PRIVATE_HOSTS: `127.0.0.1:${port}` });
    key = await createKeyIn(dataDir, 'pro');
  }, 120_000);

  afterAll(async () => {
    receiver?.kill();
    if (stack) await killStackProcess(stack);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const generate = (body: unknown) =>
    request('POST', `${stack.info.apiUrl}/v1/pdf/generate`, { apiKey: key.apiKey, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  it('shows the receiver it runs', async () => {
    const page = await readFile(join(REPO_ROOT, 'docs/async-and-webhooks.md'), 'utf8');
    const marker = page.indexOf('<!-- webhook-receiver:');
    const shown = /```js\n([\s\S]*?)```/.exec(page.slice(marker))?.[1];
    expect(marker).toBeGreaterThan(0);
    expect(shown).toBe(await readFile(join(REPO_ROOT, RECEIVER), 'utf8'));
  });

  it('refuses a receiver the stack does not list, naming the setting and the host:port that would allow it; nothing is charged', async () => {
    const other = port === 65_535 ? port - 1 : port + 1;
    for (const url of [`http://127.0.0.1:${other}/hooks/pdf`, `https://localhost:${other}/hooks/pdf`]) {
      const refused = await generate({ html: '<h1>Hello</h1>', async: true, webhook_url: url });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('url_not_allowed');
      expect(refused.body.error.message).toContain(`PDF_ALLOW_PRIVATE_HOSTS=${new URL(url).host}`);
    }
    const usage = await request('GET', `${stack.info.apiUrl}/v1/usage`, { apiKey: key.apiKey });
    expect(usage.body.quota_used).toBe(0);
  });

  it('delivers a finished job to the documented receiver, which verifies its signature, and refuses one signed with another secret', { timeout: 120_000 }, async () => {
    // Arrange: `node examples/webhook-receiver/receiver.mjs` with the key's secret, on the listed port.
    receiver = spawn(process.execPath, [RECEIVER], {
      cwd: REPO_ROOT,
      env: { ...process.env, PDFAPI_WEBHOOK_SECRET: key.webhookSecret, RECEIVER_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const said = lines(receiver);
    await said.next(new RegExp(`^listening on http://127\\.0\\.0\\.1:${port}/$`));

    // Act: the documented curl, in fetch.
    const accepted = await generate({ html: '<h1>Hello, webhook</h1>', async: true, webhook_url: `http://127.0.0.1:${port}/hooks/pdf` });
    expect(accepted.status).toBe(202);

    // Assess: the receiver verified the delivery of this job, and its link gives the PDF.
    const [, jobId, link] = await said.next(/^verified pdf\.job\.completed (job_\w+) succeeded (\S+) \(webhook-id \S+\)$/);
    expect(jobId).toBe(accepted.body.job_id);
    const pdf = await fetch(link!);
    expect(pdf.status).toBe(200);
    expect((await readPdf(new Uint8Array(await pdf.arrayBuffer()))).text).toContain('Hello, webhook');

    // A delivery signed with another key's secret is refused (400, so the sender would retry it).
    const body = JSON.stringify({ type: 'pdf.job.completed', timestamp: new Date().toISOString(), data: { job_id: 'job_forged', status: 'succeeded' } });
    const forger = new Webhook('whsec_' + Buffer.from('not the key’s secret, 32 bytes!!').toString('base64'));
    const id = 'msg_forged';
    const now = new Date();
    const forged = await fetch(`http://127.0.0.1:${port}/hooks/pdf`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': forger.sign(id, now, body) },
      body,
    });
    expect(forged.status).toBe(400);
    await said.next(/^rejected msg_forged: /);
    expect(said.all.filter((line) => line.startsWith('verified'))).toHaveLength(1);
  });

  describe('the next start-up says what the last run was', () => {
    /** A job request no pending job names, as a run cut between ending its job and removing the request leaves. */
    async function leaveJobRequest(): Promise<void> {
      const s3 = new S3Client({
        endpoint: stack.info.s3Endpoint,
        region: stack.info.region,
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      });
      await s3.send(new PutObjectCommand({ Bucket: stack.info.bucketName, Key: `${JOB_REQUEST_PREFIX}job_ended0000000000000000.json`, Body: '{}' }));
      s3.destroy();
    }
    const restart = async () => {
      stack = await startStackProcess(dataDir, undefined, { PDF_ALLOW_PRIVATE_HOSTS: `127.0.0.1:${port}` });
      await stack.reportedFirstPdfMs;
      return stack.output.join('');
    };

    it('after a clean stop (SIGTERM): what it left, never "killed"', { timeout: 120_000 }, async () => {
      await leaveJobRequest();
      await stopStackProcess(stack);
      const words = await restart();
      expect(words).toContain('Removed 1 job requests left by jobs that had ended as the last run stopped.');
      expect(words).not.toMatch(/killed/);
    });

    it('after a kill (SIGKILL): that it was killed', { timeout: 120_000 }, async () => {
      await leaveJobRequest();
      await killStackProcess(stack);
      const words = await restart();
      expect(words).toContain('Removed 1 job requests left by jobs that had ended when the last run was killed.');
    });
  });
});
