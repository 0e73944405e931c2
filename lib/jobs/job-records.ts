/**
 * Asynchronous jobs as stored: the job's item in the one table, and the request it runs as an
 * object in the bucket (a body may be 5 MB, far over an item's 400 KB), encrypted
 * (lib/jobs/request-sealing.ts) and removed when the job ends.
 *
 *   JOB#<job id> / JOB   the job: whose, what kind, its state, its quota reservation, its result
 *
 * A job waiting or running is listed in the entity index under `JOB_PENDING` by creation time, so
 * the local stack can resume every unfinished job when it starts (lib/local/stack.ts); a finished
 * job leaves the index. Finished jobs stay readable for JOB_RETENTION_DAYS, then expire by TTL.
 *
 * A result too large for the item (a batch of 100 items, each with up to 16 KB of metadata, is
 * megabytes as JSON) is kept in the bucket under JOB_RESULT_PREFIX and the item names it.
 */
import { DeleteObjectCommand, GetObjectCommand, paginateListObjectsV2, PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, GetCommand, paginateQuery, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { QuotaReservation } from '#lib/accounts/quota.ts';
import type { TierName } from '#lib/accounts/tiers.ts';
import { derivedBase62, randomBase62 } from '#lib/random.ts';
import type { PdfStore } from '#lib/storage/pdfs.ts';
import { ENTITY_INDEX } from '#lib/storage/table.ts';
import { jobRequestKeyUnwrapper, jobRequestKeyWrapper } from './request-keys.ts';
import { openJobRequest, sealJobRequest, type DataKeyUnwrapper, type DataKeyWrapper } from './request-sealing.ts';

const ENTITY = 'JOB';
const PENDING = 'JOB_PENDING';
const DAY_MS = 86_400_000;
/** How long a job's status and result can be read after it was submitted. */
export const JOB_RETENTION_DAYS = 30;
/** Where job requests wait in the bucket; a lifecycle rule removes any a job did not (cdk/constructs/storage.ts). */
export const JOB_REQUEST_PREFIX = 'jobs/';

/** Where results too large for their job's item are kept; a lifecycle rule removes them after the job's retention. */
export const JOB_RESULT_PREFIX = 'job-results/';
/** A result larger than this as JSON goes to the bucket: an item holds 400 KB at most, names and all. */
export const MAX_ITEM_RESULT_BYTES = 256 * 1024;

/**
 * How long a job's quota reservation lives: past it the job is presumed dead and settled by its
 * records (lib/jobs/jobs.ts). It outlives every way a job can still run: Lambda's queue keeps the
 * event up to JOB_ASYNC_INVOKE.maxEventAgeSeconds, and a run started in time has 15 minutes.
 */
export const JOB_RESERVATION_LIFETIME_MS = 2 * 3_600_000;
/**
 * How Lambda treats the job function's asynchronous invocations (cdk/stack.ts, and the local
 * Invoke endpoint): a run that died is tried again twice, and an event is kept queued an hour at most.
 */
export const JOB_ASYNC_INVOKE = { retryAttempts: 2, maxEventAgeSeconds: 3_600 } as const;

/** `cancelled` is a bulk job's only (DELETE /v1/jobs/{job_id}, lib/bulk/bulk-submission.ts). */
export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
/** A bulk job is run by the bulk queue's workers (lib/bulk/), never by the job function. */
export type JobKind = 'generate' | 'batch' | 'bulk';

/** What a bulk job is made of, decided at submission (lib/bulk/bulk-submission.ts). */
export interface BulkPlan {
  /** Lines of the input, valid or not. */
  readonly total: number;
  /** Lines refused at submission (`skip_invalid`): the job's first failures. */
  readonly invalid: number;
  /** Work items on the queue (each a run of consecutive lines), and the shards their progress is kept in. */
  readonly chunks: number;
  readonly shards: number;
  /**
   * Chunks dealt to shards in turn, each shard a partition key of its own (lib/bulk/bulk-records.ts);
   * absent in jobs stored before, whose shards hold consecutive chunks under the job's key.
   */
  readonly spread?: boolean;
  /** The upload the lines are read back from (lib/bulk/uploads.ts; inline items are written out as one). */
  readonly uploadId: string;
  /** Also write one ZIP of every PDF. */
  readonly archive: boolean;
  /**
   * The version each template its lines name without `template_version` renders: the latest at
   * submission, so every line of the job renders the same one whatever is saved while it runs.
   */
  readonly templateVersions?: Readonly<Record<string, number>>;
}

export interface Job {
  readonly id: string;
  readonly keyId: string;
  /** The key's tier at submission: how long the job's PDFs are kept. */
  readonly tier: TierName;
  readonly kind: JobKind;
  readonly status: JobStatus;
  readonly createdAt: string;
  readonly completedAt?: string;
  /** Runs started: more than one when a run died and the job was run again. */
  readonly attempts: number;
  /** The quota reserved at submission, settled when the job finishes. */
  readonly reservation: QuotaReservation;
  /** The request's object in the bucket, until the job finishes. */
  readonly requestKey: string;
  /** The base URL links in the result point at: the one the job was submitted through. */
  readonly baseUrl: string;
  readonly webhookUrl?: string;
  /** Secret that the job's PDF ids are derived from, so a run again finds what an earlier run made. */
  readonly seed: string;
  /** The body the synchronous call would have answered, once finished (an error body when it failed). */
  readonly result?: unknown;
  /** Where `result` is kept instead when it is too large for the item (read with readJob). */
  readonly resultKey?: string;
  /** A bulk job's plan (kind `bulk`). */
  readonly bulk?: BulkPlan;
  /** A bulk job whose every chunk is on the queue: a submission that died before it is put on again. */
  readonly enqueued?: boolean;
  /** A bulk job's outcome counts once it ended (its progress is read from its shards until then). */
  readonly succeeded?: number;
  readonly failed?: number;
  /** Shards whose every chunk is done, and when the bulk job was cancelled. */
  readonly fullShards?: number;
  readonly cancelledAt?: string;
}

/** The id of a job's PDF (`document`, `item-<n>`, `merged`): derived from the job's seed, the same on every run. */
export const jobPdfId = (job: Pick<Job, 'seed'>, label: string) => 'pdf_' + derivedBase62(job.seed, label, 24);
/** The `webhook-id` of a job's one webhook event. */
export const jobWebhookId = (job: Pick<Job, 'seed'>) => 'msg_' + derivedBase62(job.seed, 'webhook', 24);

export const jobKey = (id: string) => ({ pk: `${ENTITY}#${id}`, sk: ENTITY });

export const jobRequestKey = (keyId: string, jobId: string) => `${JOB_REQUEST_PREFIX}${keyId}/${jobId}.json`;

/**
 * A job as it is submitted, whatever its kind: queued, not yet run, its request's object and the
 * seed its PDF ids derive from decided now.
 */
export function queuedJob(input: {
  id: string;
  owner: { readonly keyId: string; readonly tier: TierName };
  kind: JobKind;
  reservation: QuotaReservation;
  baseUrl: string;
  webhookUrl: string | undefined;
  now: Date;
}): Job {
  return {
    id: input.id,
    keyId: input.owner.keyId,
    tier: input.owner.tier,
    kind: input.kind,
    status: 'queued',
    createdAt: input.now.toISOString(),
    attempts: 0,
    reservation: input.reservation,
    requestKey: jobRequestKey(input.owner.keyId, input.id),
    baseUrl: input.baseUrl,
    seed: randomBase62(32),
    ...(input.webhookUrl !== undefined && { webhookUrl: input.webhookUrl }),
  };
}

export function asJob(item: Record<string, unknown>): Job {
  const { pk: _pk, sk: _sk, ttl: _ttl, [ENTITY_INDEX.partitionKey]: _p, [ENTITY_INDEX.sortKey]: _s, ...job } = item;
  return job as unknown as Job;
}

/** The job's JSON objects in the bucket: its request, and a result too large for its item. */
async function putJsonObject(store: PdfStore, key: string, json: string): Promise<void> {
  await store.s3.send(new PutObjectCommand({ Bucket: store.bucketName, Key: key, Body: json, ContentType: 'application/json' }));
}

async function readTextObject(store: PdfStore, key: string): Promise<string> {
  const { Body } = await store.s3.send(new GetObjectCommand({ Bucket: store.bucketName, Key: key }));
  return (Body as { transformToString(): Promise<string> }).transformToString();
}

async function readJsonObject(store: PdfStore, key: string): Promise<unknown> {
  return JSON.parse(await readTextObject(store, key)) as unknown;
}

/**
 * Stores a job's request sealed (lib/jobs/request-sealing.ts): it carries the customer's secrets for
 * fetching a url (headers, basic auth, cookies), which are never stored in clear.
 */
export async function putJobRequest(store: PdfStore, key: string, body: unknown, wrapper: DataKeyWrapper = jobRequestKeyWrapper()): Promise<void> {
  await putJsonObject(store, key, await sealJobRequest(body, key, wrapper));
}

/** A job's request, opened: only where job requests may be unwrapped (the job function). */
export async function readJobRequest(store: PdfStore, key: string, unwrapper: DataKeyUnwrapper = jobRequestKeyUnwrapper()): Promise<Record<string, unknown>> {
  return openJobRequest(await readTextObject(store, key), key, unwrapper);
}

export async function deleteJobRequest(store: PdfStore, key: string): Promise<void> {
  await store.s3.send(new DeleteObjectCommand({ Bucket: store.bucketName, Key: key }));
}

/**
 * Removes every job request whose job is not pending: a run killed between recording its job's end
 * and removing the request leaves one, as does a submission that failed half-way. The local stack
 * calls it as it starts, when no submission can be in flight; in AWS the bucket's lifecycle rule
 * removes such leftovers (cdk/constructs/storage.ts).
 *
 * @returns how many were removed
 */
export async function removeLeftoverJobRequests(store: PdfStore): Promise<number> {
  const pending = new Set(await pendingJobIds(store));
  let removed = 0;
  for await (const page of paginateListObjectsV2({ client: store.s3 }, { Bucket: store.bucketName, Prefix: JOB_REQUEST_PREFIX })) {
    for (const { Key } of page.Contents ?? []) {
      const jobId = Key && /([^/]+)\.json$/.exec(Key)?.[1];
      if (!Key || (jobId && pending.has(jobId))) continue;
      await deleteJobRequest(store, Key);
      removed++;
    }
  }
  return removed;
}

/** Writes a new job, queued and listed as pending. */
export async function putJob(store: PdfStore, job: Job): Promise<void> {
  await store.dynamo.send(
    new PutCommand({
      TableName: store.tableName,
      Item: {
        ...jobKey(job.id),
        [ENTITY_INDEX.partitionKey]: PENDING,
        [ENTITY_INDEX.sortKey]: `${job.createdAt}#${job.id}`,
        ...job,
        ttl: Math.ceil((Date.parse(job.createdAt) + JOB_RETENTION_DAYS * DAY_MS) / 1000),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** A job's item: its `result` may be in the bucket (`resultKey`); readJob fetches it too. */
export async function getJob(store: PdfStore, id: string): Promise<Job | undefined> {
  const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: jobKey(id), ConsistentRead: true }));
  return Item ? asJob(Item) : undefined;
}

/** The job with its result, fetched from the bucket when it is kept there. */
export async function withResult(store: PdfStore, job: Job): Promise<Job> {
  return job.resultKey ? { ...job, result: await readJsonObject(store, job.resultKey) } : job;
}

/** A job with its result, wherever the result is kept. */
export async function readJob(store: PdfStore, id: string): Promise<Job | undefined> {
  const job = await getJob(store, id);
  return job && withResult(store, job);
}

/** Removes a job whose submission failed: nothing of it is left. */
export async function deleteJob(store: PdfStore, id: string): Promise<void> {
  await store.dynamo.send(new DeleteCommand({ TableName: store.tableName, Key: jobKey(id) }));
}

/**
 * Marks a job running, counting the run; undefined when it is already finished (nothing to run), or
 * a bulk job, which the job function never runs (its chunks are on the bulk queue).
 */
export async function startJobRun(store: PdfStore, id: string): Promise<Job | undefined> {
  try {
    const { Attributes } = await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: jobKey(id),
        UpdateExpression: 'SET #status = :running ADD #attempts :one',
        ConditionExpression: '#status IN (:queued, :running) AND #kind <> :bulk',
        ExpressionAttributeNames: { '#status': 'status', '#attempts': 'attempts', '#kind': 'kind' },
        ExpressionAttributeValues: { ':running': 'running', ':queued': 'queued', ':one': 1, ':bulk': 'bulk' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes ? asJob(Attributes) : undefined;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/**
 * Records how a job ended, once: returns false when it had already ended (another run of it, or
 * its abandonment, got there first). The job leaves the pending list.
 */
export async function finishJob(
  store: PdfStore,
  job: Pick<Job, 'id' | 'keyId'>,
  end: { status: 'succeeded' | 'failed'; result: unknown; completedAt: Date },
): Promise<boolean> {
  const json = JSON.stringify(end.result);
  // Each run keeps a large result under a name of its own: a run that loses the race below can
  // never overwrite the result of the run that won it.
  const resultKey = Buffer.byteLength(json) > MAX_ITEM_RESULT_BYTES ? `${JOB_RESULT_PREFIX}${job.keyId}/${job.id}/${randomBase62(16)}.json` : undefined;
  if (resultKey) await putJsonObject(store, resultKey, json);
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: jobKey(job.id),
        UpdateExpression: 'SET #status = :status, #result = :result, #completedAt = :completedAt REMOVE #p, #s',
        ConditionExpression: '#status IN (:queued, :running)',
        ExpressionAttributeNames: {
          '#status': 'status',
          '#result': resultKey ? 'resultKey' : 'result',
          '#completedAt': 'completedAt',
          '#p': ENTITY_INDEX.partitionKey,
          '#s': ENTITY_INDEX.sortKey,
        },
        ExpressionAttributeValues: {
          ':status': end.status,
          ':result': resultKey ?? end.result,
          ':completedAt': end.completedAt.toISOString(),
          ':queued': 'queued',
          ':running': 'running',
        },
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    if (resultKey) await store.s3.send(new DeleteObjectCommand({ Bucket: store.bucketName, Key: resultKey }));
    return false;
  }
}

/** Every job not finished yet, oldest first. */
export async function pendingJobIds(store: PdfStore): Promise<string[]> {
  const ids: string[] = [];
  const pages = paginateQuery(
    { client: store.dynamo },
    {
      TableName: store.tableName,
      IndexName: ENTITY_INDEX.name,
      KeyConditionExpression: '#p = :pending',
      ExpressionAttributeNames: { '#p': ENTITY_INDEX.partitionKey },
      ExpressionAttributeValues: { ':pending': PENDING },
    },
  );
  for await (const page of pages) ids.push(...(page.Items ?? []).map((item) => String(item.id)));
  return ids;
}
