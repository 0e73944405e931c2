/**
 * A local stack of a test file's own, in the test worker's process (as restart.test.ts runs one):
 * for tests that flood it, or kill and stop its browser, without disturbing the shared stack every
 * other file uses, and with settings of their own. The worker's environment is restored on stop.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startLocalStack, type LocalStack } from '#lib/local/stack.ts';
import { processTree } from '../../bench/lib/rss.ts';
import { createKeyIn, request, savedEnvironment, type ApiResponse } from './api.ts';

export interface PrivateStack {
  readonly stack: LocalStack;
  readonly apiUrl: string;
  /** Its data directory (for the key tool). */
  readonly dataDir: string;
  /** A key made with the project's key tool against this stack. */
  createKey(tier: string, extra?: string[]): Promise<string>;
  /** POST /v1/pdf/generate on this stack. */
  generate(apiKey: string, body: Record<string, unknown>): Promise<ApiResponse>;
  /** POST /v1/pdf/batch on this stack. */
  batch(apiKey: string, body: Record<string, unknown>): Promise<ApiResponse>;
  /** The key's quota used this month (GET /v1/usage). */
  quotaUsed(apiKey: string): Promise<number>;
  stop(): Promise<void>;
}

/** Starts a stack with these settings (environment variables) on a throw-away data directory. */
export async function startPrivateStack(settings: Record<string, string> = {}): Promise<PrivateStack> {
  const environment = savedEnvironment();
  const dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-private-'));
  // The shared stack's base URL is inherited from the vitest main process; this stack makes its own.
  delete process.env.PUBLIC_BASE_URL;
  Object.assign(process.env, settings);
  const stack = await startLocalStack({ dataDir, port: 0 });
  const post = (path: string, apiKey: string, body: unknown) =>
    request('POST', stack.apiUrl + path, { apiKey, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return {
    stack,
    apiUrl: stack.apiUrl,
    dataDir,
    createKey: async (tier, extra = []) => (await createKeyIn(dataDir, tier, extra)).apiKey,
    generate: (apiKey, body) => post('/v1/pdf/generate', apiKey, body),
    batch: (apiKey, body) => post('/v1/pdf/batch', apiKey, body),
    async quotaUsed(apiKey) {
      const usage = await request('GET', stack.apiUrl + '/v1/usage', { apiKey });
      expect(usage.status).toBe(200);
      return usage.body.quota_used as number;
    },
    async stop() {
      await stack.stop();
      environment.restore();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}


/**
 * The renderer processes of one browser. Chromium rewrites its command lines, so the arguments
 * read as one string with spaces rather than NUL-separated.
 */
export function rendererPids(browserPid: number): number[] {
  return processTree(browserPid).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer');
    } catch {
      return false;
    }
  });
}

/** Whether a process still exists (and is not a zombie). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Waits until `condition` holds, checking every 50 ms; fails after `timeoutMs`. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
