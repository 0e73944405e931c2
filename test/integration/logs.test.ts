/**
 * Error log lines carry their cause: the error's name and message (first line, no stack) and the
 * request id, the same one the 5xx answer gives the client (in its body and in `x-amzn-RequestId`). Read from the JSON lines a local stack
 * prints, run as `npm start` runs it (a child process of its own, logging at ERROR), with a real
 * storage fault: the directory where S3 (s3rver) would store the key's PDFs is a file.
 */
import { writeFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { jsonLogLines, startStackProcess, stopStackProcess, type StackProcess } from '../../bench/lib/stack-process.ts';
import { request, runKeyTool } from '../support/api.ts';

interface LogLine {
  readonly level: string;
  readonly message: string;
  readonly function_request_id?: string;
  readonly error?: { name: string; message: string; cause?: string };
  readonly [key: string]: unknown;
}

const logLines = (stack: StackProcess) => jsonLogLines<LogLine>(stack);

describe('error logs', () => {
  let dataDir: string;
  let stack: StackProcess;
  let apiKey: string;

  beforeAll(async () => {
    // Prepare: a stack of its own that logs errors, and a key whose PDFs cannot be stored
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-logs-'));
    vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'ERROR');
    try {
      stack = await startStackProcess(dataDir);
    } finally {
      vi.unstubAllEnvs();
    }
    const created = await runKeyTool(['create', '--tier', 'pro', '--json'], { DATA_DIR: dataDir });
    expect(created.code).toBe(0);
    apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
    // Every PDF object lives under retention/<days>d/<key id>/: a file named `retention` stops them all.
    const bucketDir = join(dataDir, 's3', stack.info.bucketName);
    await mkdir(bucketDir, { recursive: true });
    await writeFile(join(bucketDir, 'retention'), 'not a directory');
  });

  afterAll(async () => {
    if (stack) await stopStackProcess(stack);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('a 5xx is logged with the error’s name, its message and the request id the client got', async () => {
    // Act
    const response = await request('POST', `${stack.info.apiUrl}/v1/pdf/generate`, {
      apiKey,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ html: '<p>cannot be stored</p>' }),
    });

    // Assess: the client gets a request id and nothing internal ...
    expect(response.status).toBeGreaterThanOrEqual(500);
    const requestId = response.body.error.request_id as string;
    expect(requestId).toMatch(/\S/);
    expect(response.headers.get('x-amzn-requestid')).toBe(requestId);
    expect(response.text).not.toMatch(/InternalError|ENOTDIR|EEXIST/);
    // ... and the log line with that id says what went wrong: S3's answer to the failed write
    const line = await vi.waitFor(() => {
      const found = logLines(stack).find((candidate) => candidate.level === 'ERROR' && candidate.request_id === requestId);
      expect(found).toBeDefined();
      return found!;
    });
    expect(line.error).toMatchObject({ name: 'InternalError', message: expect.stringMatching(/internal error/i) });
    // The stand-in's own line names the file-system cause.
    expect(logLines(stack).some((candidate) => candidate.component === 'aws-standins' && /ENOTDIR|EEXIST/.test(candidate.error?.message ?? ''))).toBe(true);
  });

  it('a batch item that fails is logged by the render function with the error and its own request id', async () => {
    // Act
    const response = await request('POST', `${stack.info.apiUrl}/v1/pdf/batch`, {
      apiKey,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ pdfs: [{ html: '<p>cannot be stored either</p>' }] }),
    });

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.results[0].success).toBe(false);
    const line = await vi.waitFor(() => {
      const found = logLines(stack).find((candidate) => candidate.level === 'ERROR' && candidate.function_name === 'render');
      expect(found).toBeDefined();
      return found!;
    });
    expect(line.function_request_id).toMatch(/\S/);
    expect(line.error).toMatchObject({ name: 'InternalError', message: expect.stringMatching(/internal error/i) });
  });

  it('no log line carries a stack or a message of more than one line', () => {
    // Assess
    const lines = logLines(stack);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const text = JSON.stringify(line);
      expect(text).not.toMatch(/\\n\s*at\s/);
      expect(text).not.toMatch(/"stack"/);
      if (line.error) expect(line.error.message).not.toContain('\n');
    }
  });
});
