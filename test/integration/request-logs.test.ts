/**
 * One log line per request (issue #42): 50 requests at once to a local stack run as `npm start` runs
 * it (a child process, logging at INFO), from three keys and none, to five routes; each answer
 * carries its request id in `x-amzn-RequestId`, and the stack's output has exactly one `request`
 * line with that id, its key, route, status, a duration and the PDF or job it concerned; and no line
 * of one request carries another's key (each invocation logs in a context of its own).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { jsonLogLines, startStackProcess, stopStackProcess, type StackProcess } from '../../bench/lib/stack-process.ts';
import { createKeyIn, request, type ApiResponse } from '../support/api.ts';

interface LogLine {
  readonly level: string;
  readonly message: string;
  readonly request_id?: string;
  readonly key_id?: string;
  readonly route?: string;
  readonly status?: number;
  readonly duration_ms?: number;
  readonly pdf_ids?: string[];
  readonly job_id?: string;
  readonly [key: string]: unknown;
}

const logLines = (stack: StackProcess) => jsonLogLines<LogLine>(stack);

/** One request of the 50: what is sent, and what its line must say. */
interface Planned {
  readonly method: string;
  readonly path: string;
  readonly apiKey: string | undefined;
  readonly keyId: string | undefined;
  readonly route: string;
  readonly body?: unknown;
}

describe('request logs', () => {
  let dataDir: string;
  let stack: StackProcess;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-request-logs-'));
    stack = await startStackProcess(dataDir, undefined, { POWERTOOLS_LOG_LEVEL: 'INFO' });
  }, 90_000);

  afterAll(async () => {
    if (stack) await stopStackProcess(stack);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('50 concurrent requests each write exactly one line with their own request id, key, route, status, duration and ids', async () => {
    // Prepare: three keys, and the 50 requests (PDFs to make, usage, a PDF and a job to look up, no key at all)
    const keys = await Promise.all(['pro', 'pro', 'starter'].map((tier) => createKeyIn(dataDir, tier)));
    const planned: Planned[] = Array.from({ length: 50 }, (_, i) => {
      const key = keys[i % keys.length]!;
      switch (i % 5) {
        case 0:
          return { method: 'POST', path: '/v1/pdf/generate', apiKey: key.apiKey, keyId: key.keyId, route: 'POST /v1/pdf/generate', body: { html: `<p>document ${i}</p>` } };
        case 1:
          return { method: 'GET', path: '/v1/usage', apiKey: key.apiKey, keyId: key.keyId, route: 'GET /v1/usage' };
        case 2:
          return { method: 'GET', path: `/v1/pdf/pdf_missing${i}`, apiKey: key.apiKey, keyId: key.keyId, route: 'GET /v1/pdf/{id}' };
        case 3:
          return { method: 'GET', path: `/v1/jobs/job_missing${i}`, apiKey: key.apiKey, keyId: key.keyId, route: 'GET /v1/jobs/{job_id}' };
        default:
          return { method: 'GET', path: '/v1/usage', apiKey: undefined, keyId: undefined, route: 'GET /v1/usage' };
      }
    });

    // Act
    const responses: ApiResponse[] = await Promise.all(
      planned.map((call) =>
        request(call.method, stack.info.apiUrl + call.path, {
          ...(call.apiKey && { apiKey: call.apiKey }),
          ...(call.body !== undefined && { body: JSON.stringify(call.body), headers: { 'Content-Type': 'application/json' } }),
        }),
      ),
    );

    // Assess: every answer names its request, each a different one
    const ids = responses.map((response) => response.headers.get('x-amzn-requestid'));
    expect(ids.every((id) => typeof id === 'string' && /^[0-9a-f-]{36}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(50);
    // ... and the stack wrote exactly one request line per id
    const requestLines = await vi.waitFor(
      () => {
        const lines = logLines(stack).filter((line) => line.message === 'request' && ids.includes(line.request_id!));
        expect(lines.length).toBeGreaterThanOrEqual(50);
        return lines;
      },
      { timeout: 30_000, interval: 100 },
    );
    expect(requestLines).toHaveLength(50);
    planned.forEach((call, i) => {
      const response = responses[i]!;
      const [line, ...more] = requestLines.filter((candidate) => candidate.request_id === ids[i]);
      expect(more).toEqual([]);
      expect(line).toMatchObject({ route: call.route, status: response.status, duration_ms: expect.any(Number) });
      expect(line!.key_id).toBe(call.keyId);
      if (call.route === 'POST /v1/pdf/generate' && response.status === 200) expect(line!.pdf_ids).toEqual([response.body.id]);
      if (call.route === 'GET /v1/pdf/{id}') expect(line!.pdf_ids).toEqual([call.path.split('/').at(-1)]);
      if (call.route === 'GET /v1/jobs/{job_id}') expect(line!.job_id).toBe(call.path.split('/').at(-1));
      if (response.status >= 500) expect(response.body.error.request_id).toBe(ids[i]);
    });
    // What the requests were answered, as their lines say: the keyed ones served, the keyless refused
    expect(requestLines.filter((line) => line.status === 401)).toHaveLength(10);
    expect(requestLines.filter((line) => line.route === 'GET /v1/pdf/{id}').map((line) => line.status)).toEqual(Array(10).fill(404));

    // Assess: every line any of these requests wrote carries that request's own key, never another's
    const keyOfRequest = new Map(planned.map((call, i) => [ids[i]!, call.keyId]));
    for (const line of logLines(stack).filter((candidate) => keyOfRequest.has(candidate.request_id ?? ''))) {
      expect(line.key_id).toBe(keyOfRequest.get(line.request_id!));
    }
  });

  it('an unknown path is answered with a request id and logged with it too', async () => {
    // Act
    const unknown = await request('GET', `${stack.info.apiUrl}/v1/nothing-here`);

    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-amzn-requestid')).toMatch(/^[0-9a-f-]{36}$/);
    const line = await vi.waitFor(() => {
      const found = logLines(stack).find((candidate) => candidate.message === 'request' && candidate.request_id === unknown.headers.get('x-amzn-requestid'));
      expect(found).toBeDefined();
      return found!;
    });
    expect(line).toMatchObject({ status: 404, route: 'GET /{proxy+}' });
  });
});
