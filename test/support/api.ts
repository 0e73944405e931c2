/**
 * What integration tests need to talk to the local stack the way a customer would.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, inject } from 'vitest';
import { RATE_WINDOW_SECONDS } from '#lib/accounts/rate-limit.ts';
import { GATHERINGS_PATH, REQUEST_LOG_PATH, type Gathering } from './fixture-server.ts';

export const apiUrl = inject('apiUrl');
const run = promisify(execFile);

export interface TestKey {
  readonly apiKey: string;
  readonly keyId: string;
  readonly tier: string;
}

/** Creates a key with the project's own key tool, against the running local stack. */
export async function createKey(tier = 'pro', extra: string[] = []): Promise<TestKey> {
  const { stdout } = await run(process.execPath, ['bin/keys.ts', 'create', '--tier', tier, '--json', ...extra], {
    env: { ...process.env, DATA_DIR: inject('dataDir'), TABLE_NAME: '' },
  });
  const created = JSON.parse(stdout) as { api_key: string; key_id: string; tier: string };
  return { apiKey: created.api_key, keyId: created.key_id, tier: created.tier };
}

export async function runKeyTool(args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, ['bin/keys.ts', ...args], {
    env: { ...process.env, DATA_DIR: inject('dataDir'), TABLE_NAME: '', ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

/** A key made with the key tool against a stack of the test's own (its data directory): its key, id and webhook secret. */
export async function createKeyIn(dataDir: string, tier: string, extra: string[] = []): Promise<{ apiKey: string; keyId: string; webhookSecret: string }> {
  const created = await runKeyTool(['create', '--tier', tier, '--json', ...extra], { DATA_DIR: dataDir });
  expect(created.code, created.stderr).toBe(0);
  const parsed = JSON.parse(created.stdout) as { api_key: string; key_id: string; webhook_secret: string };
  return { apiKey: parsed.api_key, keyId: parsed.key_id, webhookSecret: parsed.webhook_secret };
}

/**
 * This process's environment as it is now (`saved`), for a test that sets variables for a stack of
 * its own; `restore()` puts it back, removing the variables set since.
 */
export function savedEnvironment(): { readonly saved: Readonly<NodeJS.ProcessEnv>; restore(): void } {
  const saved = { ...process.env };
  return {
    saved,
    restore() {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    },
  };
}

export async function post(path: string, body: unknown, apiKey?: string, init: RequestInit = {}) {
  const response = await fetch(apiUrl + path, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(apiKey && { Authorization: `Bearer ${apiKey}` }),
      ...(init.headers as Record<string, string>),
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json().catch(() => null)) as any };
}

export async function generate(apiKey: string, body: Record<string, unknown>) {
  return post('/v1/pdf/generate', body, apiKey);
}

/** What the key has used of its monthly quota, as GET /v1/usage reports it. */
export async function quotaUsed(key: TestKey): Promise<number> {
  const response = await fetch(`${apiUrl}/v1/usage`, { headers: { Authorization: `Bearer ${key.apiKey}` } });
  return ((await response.json()) as { quota_used: number }).quota_used;
}

/** Follows a download link as `curl -L` would and returns the PDF's bytes. */
export async function download(url: string): Promise<Uint8Array> {
  const response = await fetch(url, { redirect: 'follow' });
  if (response.status !== 200) throw new Error(`download answered ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** Generates a PDF and downloads it, failing loudly when either step does not succeed. */
export async function generateAndDownload(apiKey: string, body: Record<string, unknown>) {
  const result = await generate(apiKey, body);
  if (result.status !== 200) throw new Error(`generate answered ${result.status}: ${JSON.stringify(result.body)}`);
  return { record: result.body, bytes: await download(result.body.url) };
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  /** The JSON body, or null when the body is empty or not JSON. */
  readonly body: any;
  readonly text: string;
}

/** Any request to the API, as a plain HTTP client sends it; redirects are never followed. */
export async function request(
  method: string,
  path: string,
  { apiKey, body, headers = {} }: { apiKey?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const response = await fetch(path.startsWith('http') ? path : apiUrl + path, {
    method,
    redirect: 'manual',
    headers: { ...(apiKey && { Authorization: `Bearer ${apiKey}` }), ...headers },
    ...(body !== undefined && { body }),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: leave body null, keep the text
  }
  return { status: response.status, headers: response.headers, body: json as any, text };
}

/** Things an error body must never show: stack frames, source paths, internal module names. */
const LEAKS: readonly RegExp[] = [
  /\n\s*at\s/,
  /\bat\s+\S+\s+\(/,
  /\/work\//,
  /node_modules/,
  /file:\/\//,
  /(\/[\w.-]+){2,}\.(ts|js|mjs|cjs):\d+/,
];

/**
 * Asserts the documented error answer `{ error: { code, message, ...extra } }` with this status and
 * code, and that it leaks nothing (stack, paths, the given secrets). Returns the message.
 */
export function expectApiError(
  response: { status: number; body: any; text?: string },
  status: number,
  code: string,
  { secrets = [] }: { secrets?: string[] } = {},
): string {
  const raw = response.text ?? JSON.stringify(response.body);
  expect({ status: response.status, body: response.body }).toMatchObject({ status, body: { error: { code } } });
  expect(Object.keys(response.body)).toEqual(['error']);
  expect(typeof response.body.error.message).toBe('string');
  expect(response.body.error.message.length).toBeGreaterThan(0);
  for (const leak of LEAKS) expect(raw).not.toMatch(leak);
  for (const secret of secrets.filter(Boolean)) expect(raw).not.toContain(secret);
  return response.body.error.message as string;
}

/** Every request a fixture site has received so far (path plus query). */
export async function requestsReceivedBy(siteOrigin: string): Promise<string[]> {
  const response = await fetch(siteOrigin + REQUEST_LOG_PATH);
  return (await response.json()) as string[];
}

/** What a fixture site's gathering image saw of a group (test/support/fixture-server.ts). */
export async function gatheringAt(siteOrigin: string, group: string): Promise<Gathering> {
  const response = await fetch(`${siteOrigin}${GATHERINGS_PATH}?group=${encodeURIComponent(group)}`);
  return (await response.json()) as Gathering;
}

/**
 * Waits, if need be, for the next rate window, so that at least `neededMs` of the current one are
 * left. The limits count in fixed one-minute windows (lib/accounts/rate-limit.ts): a test counting
 * what a limit admits must not straddle two of them, where twice the limit is admitted by design.
 */
export async function withinOneRateWindow(neededMs = 15_000): Promise<void> {
  const windowMs = RATE_WINDOW_SECONDS * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}
