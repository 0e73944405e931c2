/**
 * The local stack starts on data where bulk jobs were left stranded, and no job stops the others
 * (issue #40). The break: a job whose chunk message was over SQS's limit stayed `queued`,
 * and `npm start` on that data directory exited 1 three times out of three, because the start-up
 * queued stranded jobs in one loop and the first that failed threw.
 *
 * A stack of this file's own (`node lib/local/start.ts`, as `npm start` runs it, on its own data
 * directory). Its data is arranged as submissions that died before their chunks were queued leave
 * it: this test process submits with the project's own code against the stack's stand-ins while
 * the queue it names does not exist (so the submission answers, and the job stays stored, not
 * queued). Then the stack is killed (-9) and started again on that data:
 * - A: the poison, as the version before planned it (one chunk for 200,000 refused lines
 *   and one valid line, whose message it could not send) runs to completion with its one line;
 * - B: a job whose plan of chunks is gone cannot be queued: it fails with a clear error, and its
 *   reservation goes back in full;
 * - C: an ordinary stranded job is queued and runs;
 * - D: a job item this version cannot read (no plan summary, as another version might write one),
 *   first in line: its error is said and skipped, and the others still run; the stack starts.
 * Then the reconcile function (the stack's Lambda Invoke endpoint, its scheduled event) does the
 * same while running: E, stranded three minutes ago, is queued and runs beside D's error, and the
 * invocation fails once everything else is done (the function's Errors alarm).
 * Money: quota used == PDFs listed == the successes, B charged nothing.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLogLines, killStackProcess, startStackProcess, type StackProcess } from '../../bench/lib/stack-process.ts';
import { createKeyIn, request, savedEnvironment, type ApiResponse } from '../support/api.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const VALID = (n: number) => JSON.stringify({ html: `<h1>Invoice ${n}</h1>`, metadata: { n } });
const INVALID = JSON.stringify({ htm: '<h1>typo</h1>' });

describe('a stack started on stranded bulk jobs', () => {
  const environment = savedEnvironment();
  let dataDir: string;
  let stack: StackProcess | undefined;
  let apiKey: string;

  const call = (method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    request(method, stack!.info.apiUrl + path, { apiKey, ...(body !== undefined && { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }) });

  async function jobWhenEnded(jobId: string, timeoutMs = 150_000): Promise<any> {
    const giveUpAt = Date.now() + timeoutMs;
    for (;;) {
      const job = await call('GET', `/v1/jobs/${jobId}`);
      if (job.status === 200 && job.body.completed_at) return job.body;
      if (Date.now() > giveUpAt) throw new Error(`job ${jobId} did not end: ${JSON.stringify(job.body)}`);
      await sleep(500);
    }
  }

  async function uploadOf(text: string): Promise<string> {
    const created = await call('POST', '/v1/uploads');
    expect((await fetch(created.body.url, { method: 'PUT', body: text })).status).toBe(200);
    return created.body.upload_id;
  }

  /** The project's code in this process, pointed at the stack's stand-ins (and a queue that does not exist). */
  async function againstTheStandIns() {
    const { localAwsEnvironment } = await import('#lib/local/stack-info.ts');
    Object.assign(process.env, localAwsEnvironment(stack!.info), {
      JOB_REQUEST_SECRET: readFileSync(join(dataDir, 'job-request-secret'), 'utf8').trim(),
      BULK_QUEUE_URL: `${stack!.info.sqsEndpoint}/000000000000/no-such-queue`,
      POWERTOOLS_LOG_LEVEL: 'CRITICAL',
    });
    const [{ submitBulkJob }, { idempotently }, { findActiveKey }, stores, records, jobRecords] = await Promise.all([
      import('#lib/bulk/bulk-submission.ts'),
      import('#lib/api/idempotency.ts'),
      import('#lib/accounts/keys.ts'),
      import('#lib/aws/stores.ts'),
      import('#lib/bulk/bulk-records.ts'),
      import('#lib/jobs/job-records.ts'),
    ]);
    const owner = (await findActiveKey(stores.keyStore(), `Bearer ${apiKey}`))!;
    const store = stores.pdfStore();
    return {
      store,
      owner,
      ...records,
      ...jobRecords,
      /** A submission whose chunks could not be queued (it logs so and answers): the job stays stored, not queued. */
      submitStranded: (request: Parameters<typeof submitBulkJob>[0]['request'], jobId?: string) =>
        submitBulkJob({ apiKey: owner, request, baseUrl: stack!.info.apiUrl, ...(jobId !== undefined && { jobId }) }),
      idempotently,
      setJob: (jobId: string, set: string, values: Record<string, unknown>, names: Record<string, string>) =>
        store.dynamo.send(
          new UpdateCommand({ TableName: store.tableName, Key: jobRecords.jobKey(jobId), UpdateExpression: `SET ${set}`, ExpressionAttributeValues: values, ExpressionAttributeNames: names }),
        ),
    };
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'pdf-api-bulk-restart-'));
    stack = await startStackProcess(dataDir);
    ({ apiKey } = await createKeyIn(dataDir, 'pro'));
  }, 90_000);

  afterAll(async () => {
    if (stack) await killStackProcess(stack);
    environment.restore();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts, runs the poison job with its one line, fails the one that cannot be queued (its reservation back), and one job that throws stops no other', async () => {
    // Arrange: D first (the oldest pending job), then A, B, C, each stranded
    const poisonLines = Array<string>(200_001).fill(INVALID);
    poisonLines[100_000] = VALID(100_001);
    const uploads = { poison: await uploadOf(poisonLines.join('\n') + '\n'), small: await uploadOf([VALID(1), VALID(2), VALID(3)].join('\n')) };
    const stand = await againstTheStandIns();
    // D: a job item as another version might write it, with no `bulk` plan summary (holding no quota), and a plan.
    const now = new Date();
    const unreadable = stand.queuedJob({
      id: 'job_' + 'd'.repeat(24),
      owner: { keyId: stand.owner.keyId, tier: 'pro' },
      kind: 'bulk',
      reservation: { keyId: stand.owner.keyId, period: now.toISOString().slice(0, 7), id: 'none', count: 0 },
      baseUrl: stack!.info.apiUrl,
      webhookUrl: undefined,
      now,
    });
    await stand.putJob(stand.store, unreadable);
    await stand.putPlan(stand.store, unreadable, []);
    const quotaBeforeD = (await call('GET', '/v1/usage')).body.quota_used;
    const poison = await stand.submitStranded({ upload_id: uploads.poison, skip_invalid: true });
    // A: planned as the version before planned it: one chunk for every line, its refused lines in it.
    const plan = (await stand.readPlan(stand.store, poison))!;
    await stand.putPlan(stand.store, poison, [{ first: 1, last: 200_001, start: plan[0]!.start, end: plan.at(-1)!.end, invalid: plan.flatMap((chunk) => chunk.invalid ?? []) }]);
    await stand.setJob(poison.id, '#bulk.#chunks = :one, #bulk.#shards = :one', { ':one': 1 }, { '#bulk': 'bulk', '#chunks': 'chunks', '#shards': 'shards' });
    const planless = await stand.submitStranded({ upload_id: uploads.small });
    await stand.store.s3.send(new DeleteObjectCommand({ Bucket: stand.store.bucketName, Key: stand.bulkObjectKey(planless, 'plan.json') }));
    const ordinary = await stand.submitStranded({ items: [JSON.parse(VALID(1)), JSON.parse(INVALID), JSON.parse(VALID(3)), JSON.parse(VALID(4))], skip_invalid: true });
    environment.restore();
    const reservedBefore = (await call('GET', '/v1/usage')).body.quota_used;
    const stuckBefore = await Promise.all([poison, planless, ordinary].map(async (job) => (await call('GET', `/v1/jobs/${job.id}`)).body.status));

    // Act: kill -9, and start again on the same data
    await killStackProcess(stack!);
    stack = await startStackProcess(dataDir, undefined, { POWERTOOLS_LOG_LEVEL: 'ERROR' });
    const [a, b, c] = [await jobWhenEnded(poison.id), await jobWhenEnded(planless.id), await jobWhenEnded(ordinary.id)];
    const d = (await call('GET', `/v1/jobs/${unreadable.id}`)).body;
    const listed = (await call('GET', '/v1/pdf?limit=100')).body.data as { id: string }[];
    const used = (await call('GET', '/v1/usage')).body.quota_used;
    const output = stack.output.join('');

    // Assess
    expect(stuckBefore).toEqual(['queued', 'queued', 'queued']);
    expect(reservedBefore - quotaBeforeD).toBe(1 + 3 + 3);
    expect(stack.child.exitCode).toBeNull();
    expect(a).toMatchObject({ status: 'succeeded', total: 200_001, succeeded: 1, failed: 200_000 });
    expect(b).toMatchObject({ status: 'failed', total: 3, succeeded: 0, failed: 3, result: { error: { code: 'render_failed' } } });
    expect(b.result.error.message).toContain('could not be put on the queue (its plan of chunks is missing)');
    expect(b.result.error.message).toContain('nothing was charged');
    expect(c).toMatchObject({ status: 'succeeded', total: 4, succeeded: 3, failed: 1 });
    expect(d).toMatchObject({ status: 'queued' });
    expect(output).toContain('Queued 2 bulk jobs whose submission died');
    expect(output).toContain('1 bulk jobs could not be queued: they failed, their reservations returned');
    expect(output).toContain('1 bulk jobs could not be queued now (see the log)');
    expect(used).toBe(1 + 3);
    expect(listed).toHaveLength(1 + 3);
    expect(quotaBeforeD).toBe(0);

    // Act: the reconcile function, on its schedule, with E stranded three minutes ago and D still there (as old)
    const again = await againstTheStandIns();
    const late = await again.submitStranded({ items: [JSON.parse(VALID(5)), JSON.parse(VALID(6))] });
    for (const jobId of [late.id, unreadable.id]) await again.setJob(jobId, '#createdAt = :then', { ':then': new Date(Date.now() - 3 * 60_000).toISOString() }, { '#createdAt': 'createdAt' });
    environment.restore();
    const lambda = new LambdaClient({ endpoint: stack.info.lambdaEndpoint, region: stack.info.region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const invoked = await lambda.send(new InvokeCommand({ FunctionName: 'reconcile', Payload: readFileSync('events/reconcile.json') }));
    lambda.destroy();
    const e = await jobWhenEnded(late.id);

    // Assess: E queued and run, D's error named, the invocation failed once the rest was done
    expect(invoked.FunctionError, Buffer.from(invoked.Payload ?? []).toString()).toBe('Unhandled');
    const logged = jsonLogLines<Record<string, unknown>>(stack);
    expect(logged.filter((line) => line.message === 'bulk job not queued; the next sweep tries again').map((line) => line.job_id)).toEqual([unreadable.id, unreadable.id]);
    expect(logged.find((line) => line.message === 'reconcile finished with errors')).toMatchObject({ requeuedBulkJobs: 1, failures: ['queue stranded bulk jobs: 1 failed'] });
    expect(e).toMatchObject({ status: 'succeeded', succeeded: 2, failed: 0 });
    expect((await call('GET', '/v1/usage')).body.quota_used).toBe(1 + 3 + 2);
    expect(((await call('GET', '/v1/pdf?limit=100')).body.data as unknown[]).length).toBe(1 + 3 + 2);
  }, 300_000);
  it('a retry with the Idempotency-Key of a submission that died after storing its job finishes that job: the same job, charged once', async () => {
    // Arrange: the first run, the project's own code behind the idempotency layer as the bulk function
    // runs it: its lines checked, quota reserved, job stored, its chunks not queued (the queue it names
    // does not exist); then it dies before answering
    const upload = await uploadOf([VALID(7), VALID(8), VALID(9)].join('\n'));
    const body = { upload_id: upload };
    const usedBefore = (await call('GET', '/v1/usage')).body.quota_used;
    const listedBefore = ((await call('GET', '/v1/pdf?limit=100')).body.data as unknown[]).length;
    const stand = await againstTheStandIns();
    const context = { getRemainingTimeInMillis: () => 28_000, functionName: 'bulk', awsRequestId: 'first-run' } as Parameters<typeof stand.idempotently>[0]['context'];
    let stored: { id: string } | undefined;
    const firstRun = stand.idempotently({ keyId: stand.owner.keyId, idempotencyKey: 'bulk-retry-after-death', path: '/v1/pdf/bulk', body, context }, async (requestIds) => {
      stored = await stand.submitStranded(body, (await requestIds!()).jobId());
      throw new Error('the run died here, before it answered');
    });
    await expect(firstRun).rejects.toThrow('the run died here');
    environment.restore();
    const stuck = (await call('GET', `/v1/jobs/${stored!.id}`)).body;

    // Act: the client's retry, the same body under the same key
    const retried = await request('POST', `${stack!.info.apiUrl}/v1/pdf/bulk`, {
      apiKey,
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'bulk-retry-after-death' },
    });
    const job = await jobWhenEnded(stored!.id);

    // Assess: the dead run's job, queued by the retry and run once; no second job, no second charge
    expect(stuck).toMatchObject({ status: 'queued', total: 3 });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ job_id: stored!.id, status: 'queued', total: 3 });
    expect(job).toMatchObject({ status: 'succeeded', total: 3, succeeded: 3, failed: 0 });
    expect((await call('GET', '/v1/usage')).body.quota_used - usedBefore).toBe(3);
    expect(((await call('GET', '/v1/pdf?limit=100')).body.data as unknown[]).length - listedBefore).toBe(3);
  }, 300_000);
});
