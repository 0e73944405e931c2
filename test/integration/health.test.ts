/**
 * GET /health tells the truth: 200 only when the browser, the table and the bucket all answer, 503
 * naming what is down otherwise. The local stack restarts its AWS stand-ins when their process dies
 * (on the same ports and data), and stops rather than serve half-dead when it cannot.
 *
 * The outage tests run a second local stack of their own (in this test worker's process) and kill
 * its stand-ins for real, so they never disturb the shared stack the other files use.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalStack, type LocalStack } from '#lib/local/stack.ts';
import { apiUrl, request, runKeyTool } from '../support/api.ts';

/** The local stack renders for everyone, so it also says how busy its renderer is. */
const RENDERING = { status: expect.stringMatching(/^(available|saturated)$/), slots: expect.any(Number), running: expect.any(Number), waiting: expect.any(Number) };
const EVENT_LOOP = { delay_p99_ms: expect.any(Number), delay_max_ms: expect.any(Number) };
const ALL_OK = { status: 'ok', checks: { browser: 'ok', table: 'ok', bucket: 'ok' }, rendering: RENDERING, event_loop: EVENT_LOOP };

/**
 * Takes a loopback port, as another process could while the stand-ins are down. It accepts
 * connections and never answers, as a stuck process would.
 */
async function occupy(port: number): Promise<{ release(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    release: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
const portOf = (endpoint: string) => Number(new URL(endpoint).port);

/** Kills the stand-ins' process as a crash would, and waits until it is gone (its ports free). */
async function killed(standIns: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => standIns.once('exit', resolve));
  standIns.kill('SIGKILL');
  await exited;
}

describe('GET /health', () => {
  it('answers 200 with every check ok when the browser and both stores answer', async () => {
    // Act
    const response = await request('GET', `${apiUrl}/health`);

    // Assess
    expect(response.status).toBe(200);
    expect(response.body).toEqual(ALL_OK);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('retry-after')).toBeNull();
  });
});

describe('a local stack whose stand-ins die', () => {
  const savedEnv = { ...process.env };
  const lost: Error[] = [];
  let dataDir: string;
  let stack: LocalStack;
  let apiKey: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-health-'));
    // The shared stack's settings are inherited from the vitest main process; this stack makes its own.
    delete process.env.PUBLIC_BASE_URL;
    stack = await startLocalStack({ dataDir, port: 0, onStandInsLost: (error) => lost.push(error) });
    const created = await runKeyTool(['create', '--tier', 'pro', '--json'], { DATA_DIR: dataDir });
    expect(created.code).toBe(0);
    apiKey = (JSON.parse(created.stdout) as { api_key: string }).api_key;
  });

  afterAll(async () => {
    await stack?.stop();
    for (const name of Object.keys(process.env)) if (!(name in savedEnv)) delete process.env[name];
    Object.assign(process.env, savedEnv);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('turns /health 503 naming the stores while they are down, then restarts them on the same ports with their data', async () => {
    // Prepare: a healthy stack with a key in its table
    expect((await request('GET', `${stack.apiUrl}/health`)).body).toEqual(ALL_OK);
    expect((await request('GET', `${stack.apiUrl}/v1/usage`, { apiKey })).status).toBe(200);
    const dynamoPort = portOf(stack.info.dynamodbEndpoint);

    // Act: the stand-ins' process dies, and its DynamoDB port is taken before it can come back
    await killed(stack.standIns.process!);
    const squatter = await occupy(dynamoPort);
    const whileDown = await request('GET', `${stack.apiUrl}/health`);
    const stateWhileDown = stack.standIns.state;
    await squatter.release();

    // Assess: 503 naming both stores (one process runs both), nothing internal in the answer
    expect(stateWhileDown).toBe('restarting');
    expect(whileDown.status).toBe(503);
    expect(whileDown.body).toEqual({ status: 'unavailable', checks: { browser: 'ok', table: 'down', bucket: 'down' }, rendering: RENDERING, event_loop: EVENT_LOOP });
    expect(whileDown.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Number(whileDown.headers.get('retry-after'))).toBeGreaterThan(0);

    // Assess: back on the same ports (the SDK's endpoints never changed), with the same data
    await vi.waitFor(async () => expect((await request('GET', `${stack.apiUrl}/health`)).body).toEqual(ALL_OK), {
      timeout: 30_000,
      interval: 200,
    });
    expect(stack.standIns.state).toBe('up');
    expect(stack.standIns.dynamodbEndpoint).toBe(stack.info.dynamodbEndpoint);
    expect((await request('GET', `${stack.apiUrl}/v1/usage`, { apiKey })).status).toBe(200);
    expect(lost).toEqual([]);
  });

  it('answers a failed storage write with a 500 for that request alone: the stand-ins keep serving', async () => {
    // Prepare: a directory where s3rver would write the object's file
    const bucket = stack.info.bucketName;
    const s3 = new S3Client({ endpoint: stack.info.s3Endpoint, forcePathStyle: true, region: stack.info.region, maxAttempts: 1, requestChecksumCalculation: 'WHEN_REQUIRED' });
    await mkdir(join(dataDir, 's3', bucket, 'write-fault.pdf._S3rver_object'), { recursive: true });
    const standIns = stack.standIns.process;

    // Act
    const failed = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'write-fault.pdf', Body: Buffer.alloc(64 * 1024, 1) })).catch((error: Error & { $metadata?: { httpStatusCode?: number } }) => error);
    const next = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'after-the-fault.pdf', Body: Buffer.from('%PDF-') }));
    s3.destroy();

    // Assess: S3's own 500, not a dropped connection; same process, still healthy
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).name).toBe('InternalError');
    expect((failed as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(500);
    expect(next.$metadata.httpStatusCode).toBe(200);
    expect(stack.standIns.process).toBe(standIns);
    expect((await request('GET', `${stack.apiUrl}/health`)).body).toEqual(ALL_OK);
  });

  it('stops the whole stack when the stand-ins cannot come back on their ports', async () => {
    // Prepare
    const dynamoPort = portOf(stack.info.dynamodbEndpoint);

    // Act: the process dies and its port stays taken for longer than every restart attempt
    await killed(stack.standIns.process!);
    const squatter = await occupy(dynamoPort);
    try {
      await vi.waitFor(() => expect(lost).toHaveLength(1), { timeout: 55_000, interval: 250 });
    } finally {
      await squatter.release();
    }

    // Assess: given up, and the API no longer answers at all
    expect(stack.standIns.state).toBe('lost');
    expect(lost[0]!.message).toMatch(/EADDRINUSE/);
    await expect(fetch(`${stack.apiUrl}/health`)).rejects.toThrow();
  }, 60_000);
});
