/**
 * The secrets of an asynchronous job's url (issue #30): `http_headers` values, the `basic_auth`
 * password and cookies, for a generate job and per item of a batch job, are never stored in clear.
 * Every file under the stack's data directory (s3rver's objects, dynalite's database, the stack's
 * own files) is searched for them while the jobs run, after a kill -9 in the middle of their runs,
 * and after they ended; and the jobs still succeed with every secret sent to the site.
 *
 * The stack is a child process (`node lib/local/start.ts`, as `npm start` runs), so it can be
 * killed with SIGKILL and started again on the same data. The site is a loopback server allowed by
 * PDF_ALLOW_PRIVATE_HOSTS: it asks for basic auth, records what each request carried, and holds
 * its answer to the first authenticated request of each page until the test lets it go.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEALED_REQUEST_FORMAT } from '#lib/jobs/request-sealing.ts';
import { killStackProcess, startStackProcess, type StackProcess } from '../../bench/lib/stack-process.ts';
import { request, runKeyTool, type ApiResponse } from '../support/api.ts';
import { normalizeText, readPdf } from '../support/pdf.ts';

const USER = 'reporter';
const HEADER_SECRET = 'HDR-SECRET-4f9c2a7e';
const PASSWORD_SECRET = 'PWD-SECRET-b81d3e05';
const COOKIE_SECRET = 'CKE-SECRET-7a6e19d4';
const ITEM_HEADER_SECRET = 'ITM-SECRET-2c5f8b31';
const ITEM_PASSWORD_SECRET = 'IPW-SECRET-9e0a4d62';
/** Each secret as written, and the basic-auth credentials as they travel (base64 of user:password). */
const NEEDLES = [
  HEADER_SECRET,
  PASSWORD_SECRET,
  COOKIE_SECRET,
  ITEM_HEADER_SECRET,
  ITEM_PASSWORD_SECRET,
  Buffer.from(`${USER}:${PASSWORD_SECRET}`).toString('base64'),
  Buffer.from(`${USER}:${ITEM_PASSWORD_SECRET}`).toString('base64'),
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > giveUpAt) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Every file under `dir`, recursively (none when it is gone: s3rver removes emptied folders). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** Where any needle occurs, byte for byte, in any file under `dir`. */
async function secretsFoundUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const file of await filesUnder(dir)) {
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch {
      continue; // removed while listing (a database compacting)
    }
    for (const needle of NEEDLES) if (bytes.includes(needle)) found.push(`${relative(dir, file)}: ${needle}`);
  }
  return found;
}

/** The site: `/page/<name>` wants basic auth, records every request, and holds the first authenticated one until released. */
class Site {
  readonly seen = new Map<string, IncomingHttpHeaders[]>();
  private readonly held = new Map<string, ServerResponse>();
  private readonly answered = new Set<string>();
  server!: Server;
  origin!: string;

  async start(): Promise<void> {
    this.server = createServer((incoming, response) => {
      const name = (incoming.url ?? '/').replace(/^\/page\//, '');
      this.seen.set(name, [...(this.seen.get(name) ?? []), incoming.headers]);
      if (!incoming.headers.authorization) {
        response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="reports"', 'Content-Type': 'text/plain' }).end('who are you?');
        return;
      }
      if (!this.answered.has(name) && !this.held.has(name)) {
        this.held.set(name, response);
        return;
      }
      this.answer(name, response);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private answer(name: string, response: ServerResponse): void {
    this.answered.add(name);
    response.writeHead(200, { 'Content-Type': 'text/html' }).end(`<!doctype html><h1>Figures for ${name}</h1><p>Fetched with its secrets</p>`);
  }

  /** Whether the page's first authenticated request is being held (its job is running, waiting on it). */
  holding(name: string): boolean {
    return this.held.has(name);
  }

  /** Answers every held request (their connections may be gone: a killed stack's browser). */
  releaseAll(): void {
    for (const [name, response] of this.held) if (!response.destroyed) this.answer(name, response);
    for (const name of this.held.keys()) this.answered.add(name);
    this.held.clear();
  }

  /** The requests of a page that carried credentials. */
  authenticated(name: string): IncomingHttpHeaders[] {
    return (this.seen.get(name) ?? []).filter((headers) => headers.authorization);
  }
}

describe('the url secrets of asynchronous jobs are never stored in clear', () => {
  const site = new Site();
  const savedEnv = { ...process.env };
  let dataDir: string;
  let stack: StackProcess;
  const output: string[] = [];
  let apiUrl: string;
  let apiKey: string;
  let keyId: string;

  const call = (method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    request(method, apiUrl + path, { apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });
  const statusOf = async (id: string) => (await call('GET', `/v1/jobs/${id}`)).body.status as string;
  const finished = (id: string) =>
    until(`job ${id} to end`, async () => {
      const job = (await call('GET', `/v1/jobs/${id}`)).body;
      return job.status === 'succeeded' || job.status === 'failed' ? job : undefined;
    }, 120_000);
  /** The job requests s3rver holds, with their contents. */
  const storedRequests = async () => {
    const files = (await filesUnder(join(dataDir, 's3', stack.info.bucketName, 'jobs', keyId))).filter((file) => file.endsWith('.json._S3rver_object'));
    return Promise.all(files.map(async (file) => ({ file, content: await readFile(file, 'utf8') })));
  };
  const start = async () => {
    stack = await startStackProcess(dataDir);
    apiUrl = stack.info.apiUrl;
  };

  beforeAll(async () => {
    await site.start();
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-job-secrets-'));
    // The stack inherits these: the site allowed, and the service's own logs at their production level.
    process.env.PDF_ALLOW_PRIVATE_HOSTS = [savedEnv.PDF_ALLOW_PRIVATE_HOSTS, new URL(site.origin).host].filter(Boolean).join(',');
    process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
    await start();
    const created = await runKeyTool(['create', '--tier', 'pro', '--json'], { DATA_DIR: dataDir });
    expect(created.code).toBe(0);
    ({ api_key: apiKey, key_id: keyId } = JSON.parse(created.stdout) as { api_key: string; key_id: string });
  }, 90_000);

  afterAll(async () => {
    if (stack) {
      output.push(...stack.output);
      await killStackProcess(stack);
    }
    for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
    Object.assign(process.env, savedEnv);
    site.releaseAll();
    site.server?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('while running, after a kill -9 and once ended: no secret in any stored file; the jobs succeed with every secret sent', async () => {
    // Prepare: a generate job and a batch job, each fetching a page that keeps them running.
    const generate = await call('POST', '/v1/pdf/generate', {
      url: `${site.origin}/page/generate`,
      http_headers: { 'X-Report-Token': HEADER_SECRET },
      basic_auth: { username: USER, password: PASSWORD_SECRET },
      cookies: [{ name: 'session', value: COOKIE_SECRET }],
      async: true,
    });
    const batch = await call('POST', '/v1/pdf/batch', {
      pdfs: [
        { html: '<p>No secrets here</p>' },
        {
          url: `${site.origin}/page/item`,
          options: { http_headers: { 'X-Item-Token': ITEM_HEADER_SECRET }, basic_auth: { username: USER, password: ITEM_PASSWORD_SECRET } },
        },
      ],
      async: true,
    });
    expect(generate.status, JSON.stringify(generate.body)).toBe(202);
    expect(batch.status, JSON.stringify(batch.body)).toBe(202);
    // A request left behind by a job that is over (as a run killed between ending its job and removing it would leave).
    const s3 = new S3Client({
      endpoint: stack.info.s3Endpoint,
      region: stack.info.region,
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    const leftover = `jobs/${keyId}/job_000000000000000000000000.json`;
    await s3.send(new PutObjectCommand({ Bucket: stack.info.bucketName, Key: leftover, Body: '{}' }));
    s3.destroy();

    // Act 1: the jobs run, each waiting on its page.
    await until('both pages to be fetched with credentials', () => (site.holding('generate') && site.holding('item') ? true : undefined), 60_000);
    expect(await statusOf(generate.body.job_id)).toBe('running');
    expect(await statusOf(batch.body.job_id)).toBe('running');

    // Assess 1: the requests are stored, sealed; no secret anywhere.
    const running = await storedRequests();
    expect(running.map(({ file }) => file.split('/').pop()).sort()).toEqual(
      [`${generate.body.job_id}.json._S3rver_object`, `${batch.body.job_id}.json._S3rver_object`, 'job_000000000000000000000000.json._S3rver_object'].sort(),
    );
    for (const { content } of running.filter(({ file }) => !file.includes('job_000000000000000000000000'))) {
      expect(JSON.parse(content)).toMatchObject({ format: SEALED_REQUEST_FORMAT, scheme: 'local' });
    }
    expect(await secretsFoundUnder(dataDir)).toEqual([]);

    // Act 2: kill -9 in the middle of both runs.
    output.push(...stack.output);
    await killStackProcess(stack);

    // Assess 2: what a crash leaves on disk holds no secret either.
    expect(await secretsFoundUnder(dataDir)).toEqual([]);

    // Act 3: started again, the stack resumes both jobs; the site answers at once from now on.
    site.releaseAll();
    await start();
    const [generated, batched] = await Promise.all([finished(generate.body.job_id), finished(batch.body.job_id)]);

    // Assess 3: both succeeded, with every secret sent to the site, on every run.
    expect(generated.status, JSON.stringify(generated.result)).toBe('succeeded');
    expect(batched.status, JSON.stringify(batched.result)).toBe('succeeded');
    expect(batched.result).toMatchObject({ total: 2, successful: 2, failed: 0 });
    // Links point at the stack the jobs were submitted to: the restarted one listens elsewhere.
    const here = (link: string) => link.replace(/^http:\/\/[^/]+/, apiUrl);
    const pdf = await readPdf(new Uint8Array(await (await fetch(here(generated.result.url))).arrayBuffer()));
    expect(normalizeText(pdf.text)).toContain('Figures for generate Fetched with its secrets');
    const item = await readPdf(new Uint8Array(await (await fetch(here(batched.result.results[1].download_url))).arrayBuffer()));
    expect(normalizeText(item.text)).toContain('Figures for item');
    const generateRuns = site.authenticated('generate');
    expect(generateRuns.length).toBeGreaterThanOrEqual(2); // before the kill, and after
    for (const headers of generateRuns) {
      expect(headers['x-report-token']).toBe(HEADER_SECRET);
      expect(headers.authorization).toBe(`Basic ${Buffer.from(`${USER}:${PASSWORD_SECRET}`).toString('base64')}`);
      expect(headers.cookie).toContain(`session=${COOKIE_SECRET}`);
    }
    const itemRuns = site.authenticated('item');
    expect(itemRuns.length).toBeGreaterThanOrEqual(2);
    for (const headers of itemRuns) {
      expect(headers['x-item-token']).toBe(ITEM_HEADER_SECRET);
      expect(headers.authorization).toBe(`Basic ${Buffer.from(`${USER}:${ITEM_PASSWORD_SECRET}`).toString('base64')}`);
    }

    // Assess 4: the ended jobs' requests are gone, and so is the leftover one; no secret anywhere,
    // nor in what the service logged.
    expect(await until('the requests to be removed', async () => ((await storedRequests()).length === 0 ? true : undefined), 10_000)).toBe(true);
    expect(await secretsFoundUnder(dataDir)).toEqual([]);
    const logged = [...output, ...stack.output].join('');
    expect(logged).toContain('Removed 1 job requests left by jobs that had ended');
    for (const needle of NEEDLES) expect(logged).not.toContain(needle);
  }, 300_000);
});
