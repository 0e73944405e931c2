/**
 * "Ours": the service as a customer meets it. The local stack runs as a child process
 * (`node lib/local/start.ts`, what `npm start` runs) on a free port with a throw-away data
 * directory and production limits; documents are sent to POST /v1/pdf/generate with an enterprise
 * key made by the project's key tool, and each PDF is downloaded through its link.
 *
 * A child process rather than startLocalStack in this process: vitest runs every project's global
 * setup in its one main process before any test, where the integration project's setup has already
 * set the test stack's limits (5 s render timeout, 50 pages...) in process.env, which the service's
 * settings read lazily, and where the render module's one shared browser would serve both stacks.
 * A child gets exactly the environment chosen here.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

const START_TIMEOUT_MS = 120_000;
const STOP_GRACE_MS = 15_000;

/**
 * Settings the service reads (lib/settings.ts) or the stack sets for itself: none may come from
 * the caller's environment, so the stack runs with every documented production default.
 * CHROME_PATH stays: both sides use the same Chromium.
 */
const SERVICE_SETTINGS = [
  'PORT',
  'DATA_DIR',
  'TABLE_NAME',
  'IDEMPOTENCY_TABLE_NAME',
  'BUCKET_NAME',
  'LINK_SIGNING_SECRET',
  'LINK_SIGNING_SECRET_ARN',
  'JOB_REQUEST_SECRET',
  'JOB_REQUEST_KEY_ARN',
  'PUBLIC_BASE_URL',
  'RENDER_TIMEOUT_MS',
  'MAX_BODY_BYTES',
  'PRESIGNED_URL_TTL_SECONDS',
  'MAX_PDF_PAGES',
  'MAX_PDF_BYTES',
  'MAX_DOCUMENT_DOWNLOAD_BYTES',
  'PREPARED_WORKSPACES',
  'MAX_IDLE_WORKSPACES',
  'MAX_WORKSPACE_USES',
  'RENDER_FUNCTION_NAME',
  'BATCH_CONCURRENCY',
  'BATCH_ITEM_TIMEOUT_MS',
  'BATCH_DEADLINE_MS',
  'RENDER_CONCURRENCY',
  'MAX_QUEUED_RENDERS',
  'MAX_QUEUE_WAIT_MS',
  'PDF_ALLOW_PRIVATE_HOSTS',
];

function serviceEnvironment(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (SERVICE_SETTINGS.includes(name) || name.startsWith('AWS_') || name.startsWith('VITEST') || name === 'NODE_ENV') continue;
    env[name] = value;
  }
  return { ...env, PORT: '0', DATA_DIR: dataDir, POWERTOOLS_LOG_LEVEL: 'ERROR', POWERTOOLS_METRICS_DISABLED: 'true' };
}

/** A running stack and a key to use it with. */
export interface Service {
  readonly apiUrl: string;
  readonly apiKey: string;
  readonly dataDir: string;
  /** The stack's pid (for the test's global setup to hand over). */
  readonly pid: number;
  stop(): Promise<void>;
}

/** What a worker needs to reach a service started elsewhere (vitest's global setup). */
export interface ServiceAddress {
  readonly apiUrl: string;
  readonly apiKey: string;
}

const children = new Set<ChildProcess>();
// A harness that dies must not leave a stack (and its Chromium) behind.
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Starts the local stack in a fresh temporary directory and creates an enterprise key on it. */
export async function startService(log: (line: string) => void = () => undefined): Promise<Service> {
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-fidelity-'));
  const infoPath = join(dataDir, 'stack.json');
  const output: string[] = [];
  const child = spawn(process.execPath, ['lib/local/start.ts'], {
    cwd: REPO_ROOT,
    env: serviceEnvironment(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 200) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited with ${signal ?? `code ${code}`}`));

  const started = performance.now();
  let apiUrl: string | undefined;
  while (!apiUrl) {
    if (exited) throw new Error(`The local stack ${exited} before it was ready:\n${output.join('')}`);
    if (performance.now() - started > START_TIMEOUT_MS) {
      child.kill('SIGKILL');
      throw new Error(`The local stack was not ready after ${START_TIMEOUT_MS} ms:\n${output.join('')}`);
    }
    if (existsSync(infoPath)) {
      try {
        const info = JSON.parse(readFileSync(infoPath, 'utf8')) as { pid: number; apiUrl: string };
        if (info.pid === child.pid) apiUrl = info.apiUrl;
      } catch {
        // caught mid-write: read again on the next turn
      }
    }
    if (!apiUrl) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  log(`service: local stack on ${apiUrl} (data in ${dataDir}), ready after ${Math.round(performance.now() - started)} ms`);

  const { stdout } = await run(
    process.execPath,
    ['bin/keys.ts', 'create', '--tier', 'enterprise', '--name', 'fidelity', '--json'],
    { cwd: REPO_ROOT, env: { ...serviceEnvironment(dataDir), TABLE_NAME: '' } },
  );
  const apiKey = (JSON.parse(stdout) as { api_key: string }).api_key;

  return {
    apiUrl,
    apiKey,
    dataDir,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
        await gone;
        clearTimeout(timer);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The service's answer when it is not a PDF. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
}

/**
 * Prints one document through the API: POST /v1/pdf/generate with the HTML and the case's options,
 * then the PDF downloaded through the returned link (which redirects to storage).
 */
export async function printWithService(
  service: ServiceAddress,
  html: string,
  options: Readonly<Record<string, unknown>> = {},
): Promise<Uint8Array> {
  return generateWithService(service, { html, ...options });
}

/**
 * Prints a stored template through the API: POST /v1/templates with the Liquid source, then
 * POST /v1/pdf/generate with its template_id, the data and the case's options, then the download.
 */
export async function printTemplateWithService(
  service: ServiceAddress,
  source: string,
  data: Readonly<Record<string, unknown>>,
  options: Readonly<Record<string, unknown>> = {},
): Promise<Uint8Array> {
  const created = await fetch(`${service.apiUrl}/v1/templates`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${service.apiKey}` },
    body: JSON.stringify({ name: 'fidelity', html: source }),
  });
  const text = await created.text();
  if (created.status !== 201) throw new ServiceError(`saving the template answered HTTP ${created.status} (${text.slice(0, 500)})`);
  const { template_id } = JSON.parse(text) as { template_id: string };
  return generateWithService(service, { template_id, data, ...options });
}

/**
 * Pictures one document through the API: POST /v1/image/generate with the HTML and the `image`
 * options, then the picture downloaded through its link.
 */
export async function pictureWithService(service: ServiceAddress, html: string, image: Readonly<Record<string, unknown>> = {}): Promise<Uint8Array> {
  return generateWithService(service, { html, image }, '/v1/image/generate');
}

/**
 * Prints one document with a `thumbnail` through the API: the PDF and its thumbnail, each
 * downloaded through its link.
 */
export async function thumbnailWithService(
  service: ServiceAddress,
  html: string,
  options: Readonly<Record<string, unknown>>,
  thumbnail: Readonly<Record<string, unknown>>,
): Promise<{ pdf: Uint8Array; thumbnail: Uint8Array }> {
  const response = await fetch(`${service.apiUrl}/v1/pdf/generate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${service.apiKey}` },
    body: JSON.stringify({ html, ...options, thumbnail }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new ServiceError(`the service answered HTTP ${response.status} (${text.slice(0, 500)})`);
  const record = JSON.parse(text) as { url: string; thumbnail_url: string };
  const fetchFile = async (url: string) => {
    const download = await fetch(url, { redirect: 'follow' });
    if (download.status !== 200) throw new ServiceError(`a download link answered HTTP ${download.status}`);
    return new Uint8Array(await download.arrayBuffer());
  };
  return { pdf: await fetchFile(record.url), thumbnail: await fetchFile(record.thumbnail_url) };
}

async function generateWithService(service: ServiceAddress, body: Readonly<Record<string, unknown>>, path = '/v1/pdf/generate'): Promise<Uint8Array> {
  const response = await fetch(`${service.apiUrl}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${service.apiKey}` },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) {
    let message = text.slice(0, 500);
    try {
      const error = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
      if (error) message = `${error.code}: ${error.message}`;
    } catch {
      // not JSON: the raw text says what happened
    }
    throw new ServiceError(`the service answered HTTP ${response.status} (${message})`);
  }
  const record = JSON.parse(text) as { url: string };
  const download = await fetch(record.url, { redirect: 'follow' });
  if (download.status !== 200) throw new ServiceError(`the file's download link answered HTTP ${download.status}`);
  return new Uint8Array(await download.arrayBuffer());
}
