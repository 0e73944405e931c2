/**
 * The whole service in one process: dynalite, s3rver and our SQS (lib/local/sqs-standin.ts) as AWS
 * stand-ins, Lambda's event source mapping from the bulk queue (lib/local/event-source-mapping.ts), the API-Gateway-style
 * adapter in front of the real handlers, and the shared browser warmed before the API answers.
 *
 * The stack owns its process: it points the AWS SDK at the stand-ins through the standard
 * environment variables, exactly as a deployment's configuration would point it at AWS.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { reconcileQuotas } from '#lib/accounts/reconcile.ts';
import { FUNCTION_PROFILES } from '#lib/api/routes.ts';
import { invokeJobFunction } from '#lib/aws/job-invoker.ts';
import { counterStore, pdfStore, signingKeyStore } from '#lib/aws/stores.ts';
import { retryKeyDeletions } from '#lib/signatures/signing-keys.ts';
import { abandonExpiredJobs, endGivenUpJob } from '#lib/jobs/job-endings.ts';
import { completeExpiredBulkJobs } from '#lib/bulk/bulk-completion.ts';
import { enqueueStrandedBulkJobs } from '#lib/bulk/bulk-submission.ts';
import { BULK_WORKER_TIMEOUT_SECONDS, releaseAllChunkLeases } from '#lib/bulk/bulk-records.ts';
import { getJob } from '#lib/jobs/job-records.ts';
import { JOB_ASYNC_INVOKE, pendingJobIds, removeLeftoverJobRequests } from '#lib/jobs/job-records.ts';
import { webhookDeps } from '#lib/jobs/job-webhooks.ts';
import { sendDueDeliveries } from '#lib/webhooks/deliveries.ts';
import { prepareDocument, renderLimits } from '#lib/documents/produce-pdf.ts';
import { registerHealthCheck, registerRenderingState } from '#lib/observability/health.ts';
import { renderCapacity } from '#lib/render/capacity.ts';
import { getBrowser } from '#lib/render/browser.ts';
import { renderPdf } from '#lib/render/render.ts';
import { prepareWorkspaces, shutDownRendering } from '#lib/render/workspaces.ts';
import { settings } from '#lib/settings.ts';
import { startStandIns, type StandIns } from './aws-standins.ts';
import { createGateway } from './gateway.ts';
import { LambdaConcurrency } from './lambda-concurrency.ts';
import { API_HANDLERS, INVOKED_HANDLERS } from './handlers.ts';
import { createInvokeEndpoint } from './invoke.ts';
import { createKmsStandIn } from './kms-standin.ts';
import { mendTornPdfRecords } from './torn-writes.ts';
import { ensureBucket, ensureBulkQueues, ensureIdempotencyTable, ensureTable } from './provision.ts';
import { startEventSourceMapping } from './event-source-mapping.ts';
import { keepMemoryReducerWorking } from './memory-reducer.ts';
import { LOCAL_REGION, localAwsEnvironment, stackInfoPath, type StackInfo } from './stack-info.ts';

export const LOCAL_TABLE_NAME = 'pdf-api';
export const LOCAL_BUCKET_NAME = 'pdf-api-local';
export const LOCAL_IDEMPOTENCY_TABLE_NAME = 'pdf-api-idempotency';
export const LOCAL_BULK_QUEUE_NAME = 'pdf-api-bulk';
/** How often the running stack settles the reservations of requests that died (cdk: every 5 minutes). */
const RECONCILE_INTERVAL_MS = 60_000;
/** API Gateway's integration timeout: no API answer takes longer. */
const GATEWAY_TIMEOUT_MS = 29_000;
/** Lambda's longest run: the job function's timeout (cdk/stack.ts). */
const JOB_FUNCTION_TIMEOUT_MS = 15 * 60_000;
/** Before the first retry of a failed job run (Lambda waits about a minute; a local stack need not). */
const LOCAL_RETRY_DELAY_MS = 2_000;

/**
 * Written by a clean stop (SIGTERM, Ctrl-C), removed at start: the next start knows whether the last
 * run was stopped or killed, and says which in what it repairs.
 */
const cleanStopPath = (dataDir: string) => join(dataDir, 'stopped-cleanly');

function applyEnvironment(values: Record<string, string>): void {
  // A developer's own AWS profile or session must never leak into local calls.
  for (const name of ['AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_DEFAULT_PROFILE']) delete process.env[name];
  Object.assign(process.env, values);
}

/**
 * A secret of the stack, made once per data directory so that it survives restarts: the
 * link-signing secret (links stay valid), and the one job requests are sealed with (a job resumed
 * after a restart still opens).
 */
async function stackSecret(dataDir: string, name: string): Promise<string> {
  const path = join(dataDir, name);
  if (existsSync(path)) return (await readFile(path, 'utf8')).trim();
  const secret = randomBytes(32).toString('base64url');
  await writeFile(path, secret + '\n', { mode: 0o600 });
  await chmod(path, 0o600);
  return secret;
}

async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolveListen());
  });
  return (server.address() as AddressInfo).port;
}

/** A bulk job stored this long ago with its chunks not all queued belongs to a submission that died. */
const STRANDED_BULK_JOB_MS = 2 * 60_000;

/**
 * One repair of the stack's start-up: what it returns, or undefined when it failed, which is said on
 * stderr and does not stop the start (the sweeps of `reconcileNow` try again while the stack runs).
 */
async function atStartUp<T>(what: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (error) {
    console.error(`At start-up, ${what} failed: ${error instanceof Error ? error.message : String(error)}. The stack starts anyway; it is tried again within a minute.`);
    return undefined;
  }
}

/** The scheduled reconcile function's sweeps (functions/reconcile.ts), each whatever the others did; errors are logged where they happen. */
async function reconcileNow(stores: { counters: ReturnType<typeof counterStore>; pdfs: ReturnType<typeof pdfStore> }): Promise<void> {
  const quietly = (run: () => Promise<unknown>) => run().catch((error: unknown) => console.error(`A reconcile sweep failed: ${error instanceof Error ? error.message : String(error)}`));
  await quietly(() => abandonExpiredJobs(new Date()));
  await quietly(() => completeExpiredBulkJobs(new Date()));
  await quietly(() => enqueueStrandedBulkJobs(new Date(), STRANDED_BULK_JOB_MS));
  await quietly(() => reconcileQuotas(stores, new Date()));
  await quietly(() => retryKeyDeletions(signingKeyStore(), new Date()));
}

/**
 * The bulk queue's MaximumConcurrency here (BULK_MAXIMUM_CONCURRENCY, 2 at least as AWS requires).
 * On one machine more chunks at once than it renders only puts more lines in its render lines: a
 * key's chunks would hold every place while another key's waited in the queue, where fairness is.
 */
function localBulkConcurrency(): number {
  const raw = process.env.BULK_MAXIMUM_CONCURRENCY;
  const value = raw ? Number(raw) : Math.max(2, settings.renderConcurrency);
  if (!Number.isInteger(value) || value < 2) throw new Error(`BULK_MAXIMUM_CONCURRENCY must be an integer >= 2, got "${raw}"`);
  return value;
}

export interface LocalStack {
  readonly apiUrl: string;
  readonly info: StackInfo;
  /** Time from start until the first PDF rendered (the warm-up document). */
  readonly coldStartMs: number;
  /** dynalite and s3rver, supervised. */
  readonly standIns: StandIns;
  stop(): Promise<void>;
}

export interface LocalStackOptions {
  readonly dataDir: string;
  readonly port: number;
  readonly host?: string;
  /**
   * Called after the stack stopped because its AWS stand-ins died and could not be restarted.
   * By default the process says so on stderr and exits with code 1: a stack never serves half-dead.
   */
  readonly onStandInsLost?: (error: Error) => void;
}

/** The default end of a stack whose stand-ins are gone: loudly, and with a non-zero exit code. */
function exitLoudly(error: Error): void {
  console.error(`The local stack stopped: its AWS stand-ins (dynalite, s3rver) died and could not be restarted (${error.message}). Start it again with npm start.`);
  process.exit(1);
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const started = performance.now();
  const dataDir = resolve(options.dataDir);
  const host = options.host ?? '127.0.0.1';
  await mkdir(join(dataDir, 'dynamodb'), { recursive: true });
  await mkdir(join(dataDir, 's3'), { recursive: true });
  await mkdir(join(dataDir, 'sqs'), { recursive: true });
  await mkdir(join(dataDir, 'kms'), { recursive: true, mode: 0o700 });

  // Supervised (lib/local/aws-standins.ts): a crashed stand-in comes back on the same data and
  // ports; one that cannot stops the whole stack.
  let stopStack: (() => Promise<void>) | undefined;
  const standIns = await startStandIns(
    { dynamo: join(dataDir, 'dynamodb'), s3: join(dataDir, 's3'), sqs: join(dataDir, 'sqs') },
    { onLost: (error) => void (stopStack?.() ?? Promise.resolve()).finally(() => (options.onStandInsLost ?? exitLoudly)(error)) },
  );
  // This process owns the browser as well as the stores: /health checks all three.
  const unregisterBrowserCheck = registerHealthCheck('browser', async () => (await getBrowser()).version());
  const unregisterRenderingState = registerRenderingState(() => renderCapacity().state);
  // KMS's signing keys (lib/signatures/): on this process's loop, as the Invoke endpoint; a Sign is
  // a millisecond of arithmetic, and key generation runs on libuv's pool.
  const kmsStandIn = createKmsStandIn({ directory: join(dataDir, 'kms'), region: LOCAL_REGION });
  const kmsEndpoint = `http://${host}:${await listen(kmsStandIn, 0, host)}`;
  const awsInfo = {
    region: LOCAL_REGION,
    kmsEndpoint,
    dynamodbEndpoint: standIns.dynamodbEndpoint,
    s3Endpoint: standIns.s3Endpoint,
    sqsEndpoint: standIns.sqsEndpoint,
    tableName: LOCAL_TABLE_NAME,
    idempotencyTableName: LOCAL_IDEMPOTENCY_TABLE_NAME,
    bucketName: LOCAL_BUCKET_NAME,
  };
  // The Lambda Invoke endpoint, for the batch function's fan-out to the render function.
  // Job runs get Lambda's 15 minutes; the rest what they have in AWS at most.
  // Lambda's concurrency, shared by the API's invocations and the Invoke API's, as in one AWS account.
  const concurrency = new LambdaConcurrency({ account: settings.lambdaAccountConcurrency });
  const invokeEndpoint = createInvokeEndpoint(INVOKED_HANDLERS, {
    concurrency,
    timeoutMs: (name) =>
      FUNCTION_PROFILES[name].bulkWorker ? BULK_WORKER_TIMEOUT_SECONDS * 1000 : FUNCTION_PROFILES[name].runsJobs ? JOB_FUNCTION_TIMEOUT_MS : GATEWAY_TIMEOUT_MS,
    retryAttempts: JOB_ASYNC_INVOKE.retryAttempts,
    retryDelayMs: LOCAL_RETRY_DELAY_MS,
    // Lambda's failure destination: the job no try could finish is ended now, not hours later.
    onGivenUp: (name, record) => {
      if (FUNCTION_PROFILES[name].runsJobs) void endGivenUpJob(record).catch((error: unknown) => console.error(`A given-up job was not ended: ${(error as Error)?.message}`));
    },
  });
  const lambdaEndpoint = `http://${host}:${await listen(invokeEndpoint, 0, host)}`;
  applyEnvironment({
    ...localAwsEnvironment(awsInfo),
    AWS_ENDPOINT_URL_LAMBDA: lambdaEndpoint,
    RENDER_FUNCTION_NAME: 'render',
    JOB_FUNCTION_NAME: 'job',
    // Local invocations share this machine: a batch keeps no more in flight than it can run.
    BATCH_CONCURRENCY: process.env.BATCH_CONCURRENCY ?? String(settings.renderConcurrency),
    LINK_SIGNING_SECRET: await stackSecret(dataDir, 'link-signing-secret'),
    // Locally there is no KMS: job requests are sealed with a key derived from this (lib/jobs/request-keys.ts).
    JOB_REQUEST_SECRET: await stackSecret(dataDir, 'job-request-secret'),
  });

  const dynamoClient = new DynamoDBClient({});
  const s3Client = new S3Client({ forcePathStyle: true });
  await ensureTable(dynamoClient, LOCAL_TABLE_NAME);
  await ensureIdempotencyTable(dynamoClient, LOCAL_IDEMPOTENCY_TABLE_NAME);
  await ensureBucket(s3Client, LOCAL_BUCKET_NAME);
  dynamoClient.destroy();
  s3Client.destroy();
  const sqsClient = new SQSClient({});
  const bulkQueues = await ensureBulkQueues(sqsClient, LOCAL_BULK_QUEUE_NAME);
  process.env.BULK_QUEUE_URL = bulkQueues.queueUrl;

  // Quota held by requests of a previous run that died (kill -9, a crash) is settled by the PDF
  // records they wrote. This process is the only one that serves this data directory, so every
  // reservation left from before it started belongs to a request that is gone.
  // Each repair at start-up on its own, and each job or reservation within it: what fails is said
  // and skipped (the minute's sweep below tries it again), and the stack starts anyway.
  const stores = { counters: counterStore(), pdfs: pdfStore() };
  // What the last run left is said as it happened: a clean stop ends work in flight too (jobs running
  // are resumed below), but was no kill.
  const lastRun = existsSync(cleanStopPath(dataDir)) ? 'as the last run stopped' : 'when the last run was killed';
  await rm(cleanStopPath(dataDir), { force: true });
  const mended = await atStartUp('mending half-written PDF records', () => mendTornPdfRecords(stores.pdfs));
  if (mended && mended.completed + mended.dropped > 0) console.info(`Mended PDF records half-written ${lastRun}: ${mended.completed} completed, ${mended.dropped} dropped.`);
  const repaired = await atStartUp('settling reservations', () => reconcileQuotas(stores, new Date(), { everyRequestIsDead: true }));
  // A job request outlives no job: one left by a run killed between ending its job and removing it goes now.
  const leftovers = await atStartUp('removing job requests of ended jobs', () => removeLeftoverJobRequests(stores.pdfs));
  if (leftovers) console.info(`Removed ${leftovers} job requests left by jobs that had ended ${lastRun}.`);
  // Deleted signing keys whose KMS key a run left unscheduled.
  const keyDeletions = await atStartUp("scheduling deleted signing keys' KMS deletion", () => retryKeyDeletions(signingKeyStore(), new Date()));
  if (keyDeletions && keyDeletions.scheduled > 0) console.info(`Scheduled the KMS deletion of ${keyDeletions.scheduled} deleted signing keys ${lastRun}.`);
  if (repaired && repaired.repaired > 0) console.info(`Settled ${repaired.repaired} reservations left by requests that died: ${repaired.returned} PDFs given back, ${repaired.charged} charged.`);
  if (repaired && repaired.errors > 0) console.error(`${repaired.errors} reservations could not be settled (see the log); tried again within a minute.`);
  // And while it runs, as the scheduled reconcile function does in AWS: every step whatever the others did.
  const reconciliation = setInterval(() => void reconcileNow(stores), RECONCILE_INTERVAL_MS);
  reconciliation.unref();
  // A long-running process, unlike a Lambda environment: what a burst of work left goes back once it is quiet.
  const stopKeepingMemoryReducer = keepMemoryReducerWorking();
  // Webhook deliveries that are due, as the scheduled webhooks function does in AWS: the same pool
  // of senders, fair between keys, here running for as long as the stack does.
  const webhookSending = new AbortController();
  void sendDueDeliveries(webhookDeps(), {
    concurrency: settings.webhookConcurrency,
    perKeyConcurrency: settings.webhookConcurrencyPerKey,
    pollIntervalMs: settings.webhookDispatchIntervalMs,
    stop: webhookSending.signal,
  }).catch((error: unknown) => console.error(`Webhook deliveries stopped: ${error instanceof Error ? error.message : String(error)}`));

  // The API answers only once it can render: the first PDF pays Chromium's start-up here.
  const warmUp = await prepareDocument({ html: '<p>warm-up</p>', options: {}, keyId: 'local-warm-up' });
  await renderPdf(warmUp.source, warmUp.options, { ...renderLimits(), timeoutMs: Math.max(settings.renderTimeoutMs, 30_000) });
  const coldStartMs = Math.round(performance.now() - started);
  // The warm-up prepared static workspaces; the first scripted document should find one ready too.
  prepareWorkspaces(renderLimits().workspaces);

  const server = createGateway(API_HANDLERS, { timeoutMs: GATEWAY_TIMEOUT_MS, concurrency });
  const port = await listen(server, options.port, host);
  const apiUrl = `http://${host}:${port}`;
  // Links point at this stack unless the operator chose a base URL; a restart on another port gets new ones.
  const ownsBaseUrl = !process.env.PUBLIC_BASE_URL;
  if (ownsBaseUrl) process.env.PUBLIC_BASE_URL = apiUrl;

  const info: StackInfo = { pid: process.pid, apiUrl, lambdaEndpoint, ...awsInfo };
  await writeFile(stackInfoPath(dataDir), JSON.stringify(info, null, 2) + '\n');

  // Lambda keeps queued job events across anything; here the jobs themselves are the queue: every
  // job not finished when the last run stopped is run again (a run finds what an earlier one made).
  const unfinished = (await atStartUp('listing unfinished jobs', () => pendingJobIds(stores.pdfs))) ?? [];
  let resumed = 0;
  for (const job_id of unfinished) {
    // Bulk jobs resume from the queue, which kept their chunks. Their chunk leases belong to workers
    // of the last run, all dead now.
    const ok = await atStartUp(`resuming job ${job_id}`, async () => {
      const job = await getJob(stores.pdfs, job_id);
      if (job?.kind === 'bulk') await releaseAllChunkLeases(stores.pdfs, job);
      else await invokeJobFunction({ job_id });
      return true;
    });
    if (ok) resumed++;
  }
  if (resumed > 0) console.info(`Resumed ${resumed} jobs left unfinished by the last run.`);
  // A bulk job whose submission died before its chunks were queued is queued now (or fails, its
  // reservation returned, when it cannot be).
  const swept = await atStartUp('queueing bulk jobs whose submission died', () => enqueueStrandedBulkJobs(new Date(), 0));
  if (swept && swept.queued > 0) console.info(`Queued ${swept.queued} bulk jobs whose submission died before their chunks were queued.`);
  if (swept && swept.failed > 0) console.error(`${swept.failed} bulk jobs could not be queued: they failed, their reservations returned (see the log).`);
  if (swept && swept.errors > 0) console.error(`${swept.errors} bulk jobs could not be queued now (see the log); tried again within a minute.`);
  // Lambda's event source mappings: the bulk worker on the bulk queue, within its maximum
  // concurrency; the reconcile function on its dead-letter queue (cdk/stack.ts maps both the same).
  const bulkMapping = startEventSourceMapping(
    {
      queueUrl: bulkQueues.queueUrl,
      queueArn: bulkQueues.queueArn,
      functionName: 'bulkWorker',
      batchSize: 1,
      maximumConcurrency: localBulkConcurrency(),
      reportBatchItemFailures: true,
    },
    sqsClient,
  );
  const deadLetterMapping = startEventSourceMapping(
    { queueUrl: bulkQueues.deadLetterUrl, queueArn: bulkQueues.deadLetterArn, functionName: 'reconcile', batchSize: 10, maximumConcurrency: 2, reportBatchItemFailures: true },
    sqsClient,
  );

  // Once only: the stand-ins' supervisor may stop the stack before its owner does.
  let stopping: Promise<void> | undefined;
  stopStack = () => (stopping ??= stop());
  async function stop() {
    clearInterval(reconciliation);
    stopKeepingMemoryReducer();
    await Promise.all([bulkMapping.stop(), deadLetterMapping.stop()]);
    sqsClient.destroy();
    webhookSending.abort();
    unregisterBrowserCheck();
    unregisterRenderingState();
    await rm(stackInfoPath(dataDir), { force: true });
    if (ownsBaseUrl) delete process.env.PUBLIC_BASE_URL;
    server.closeAllConnections();
    await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
    invokeEndpoint.closeAllConnections();
    await new Promise<void>((resolveClose) => invokeEndpoint.close(() => resolveClose()));
    kmsStandIn.closeAllConnections();
    await new Promise<void>((resolveClose) => kmsStandIn.close(() => resolveClose()));
    await shutDownRendering();
    await standIns.close();
    await writeFile(cleanStopPath(dataDir), `${new Date().toISOString()}\n`);
  }
  return { apiUrl, info, coldStartMs, standIns, stop: stopStack };
}
