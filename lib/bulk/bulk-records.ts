/**
 * A bulk job's state beside its job item (lib/jobs/job-records.ts), kept so that every step can be
 * repeated by a duplicate delivery, a retry or a restart without effect:
 *
 *   BULK#<job id>#<s> / PROGRESS   shard s: the progress of the chunks k with k mod shards = s
 *                                  (at most CHUNKS_PER_SHARD of them): for each chunk done `done_<k>`,
 *                                  its lease `lease_<k>` while one worker has it, and the sums
 *                                  `doneCount`, `succeeded`, `failed` of the chunks done
 *   BULK#<job id> / COMPLETION     the completion's lease
 *
 * A chunk is done in one conditional write (its mark, its counts and the lease's end together, only
 * if it was not done already), so each chunk counts once whatever runs it twice. Shards keep any
 * one item small, and each is a partition key of its own with chunks dealt to them in turn, so the
 * chunks running at once write to every shard rather than one (docs/bulk-jobs.md, "The million"):
 * a million lines is 100,000 chunks on 100 shards, and at 1,000 workers each shard takes about 6
 * writes a second, far within DynamoDB's 1,000 write units a second per partition key. Progress is
 * the shards' sum. Jobs stored before this layout (`bulk.spread` absent) keep theirs:
 * `BULK#<job id> / SHARD#<s>` for chunks s × CHUNKS_PER_SHARD onwards.
 *
 * In the bucket, under BULK_PREFIX<key id>/<job id>/: the input when it came inline (`items.jsonl`),
 * the chunk plan (`plan.json`), each chunk's per-line results (`chunks/<k>.json`), and the job's
 * results: `manifest.jsonl` (and `archive.zip`).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, paginateQuery, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { BatchItemCode } from '#lib/documents/batch.ts';
import { asJob, jobKey, type Job } from '#lib/jobs/job-records.ts';
import type { PdfRecord, PdfStore } from '#lib/storage/pdfs.ts';
import { ENTITY_INDEX, TTL_ATTRIBUTE } from '#lib/storage/table.ts';

/** Where a bulk job's objects are kept in the bucket; a lifecycle rule removes them after the job's retention. */
export const BULK_PREFIX = 'bulk/';
/** Where uploads (POST /v1/uploads) are put; a lifecycle rule removes them after UPLOAD_RETENTION_DAYS. */
export const UPLOAD_PREFIX = 'uploads/';
export const UPLOAD_RETENTION_DAYS = 7;
/** Chunks whose progress one shard item holds: 1,000 marks and leases are a few tens of KB, far within an item's 400 KB. */
export const CHUNKS_PER_SHARD = 1_000;
/**
 * Shards a job has at least (or one per chunk, when it has fewer chunks): the chunks of a job of
 * 100,000 lines (10,000 chunks) then spread over 32 partition keys, not 10, so no shard takes more
 * than about 20 updates a second from 1,000 workers, and reading the progress stays a few reads.
 */
export const MIN_SHARDS = 32;

export const bulkObjectKey = (job: Pick<Job, 'keyId' | 'id'>, name: string) => `${BULK_PREFIX}${job.keyId}/${job.id}/${name}`;
export const uploadObjectKey = (keyId: string, uploadId: string) => `${UPLOAD_PREFIX}${keyId}/${uploadId}.jsonl`;

/** How a job's progress is laid out: its chunk and shard counts, and whether chunks are dealt to shards in turn (`spread`). */
export type ShardLayout = Pick<NonNullable<Job['bulk']>, 'chunks' | 'shards' | 'spread'>;
type BulkJobRef = Pick<Job, 'id'> & { readonly bulk?: ShardLayout | undefined };

/** A new job's shards: enough that none holds more than CHUNKS_PER_SHARD chunks, at least MIN_SHARDS (at most one per chunk). */
export const shardsFor = (chunks: number) => Math.max(1, Math.min(chunks, Math.max(MIN_SHARDS, Math.ceil(chunks / CHUNKS_PER_SHARD))));
/** The shard a chunk's progress is kept in. */
export const shardOf = (layout: ShardLayout, chunk: number) => (layout.spread ? chunk % layout.shards : Math.floor(chunk / CHUNKS_PER_SHARD));
/** How many of the job's chunks a shard holds. */
export function chunksInShard(layout: ShardLayout, shard: number): number {
  if (layout.spread) return shard < layout.chunks % layout.shards ? Math.ceil(layout.chunks / layout.shards) : Math.floor(layout.chunks / layout.shards);
  return Math.min(CHUNKS_PER_SHARD, layout.chunks - shard * CHUNKS_PER_SHARD);
}

/**
 * The bulk worker's timeout (cdk/stack.ts), and how the queue hands it work. The worker's 15
 * minutes are a job's completion's (its manifest and archive in one invocation); Lambda's event
 * source mapping requires the queue's visibility timeout to be at least the function's timeout, so
 * the queue's is the timeout and 3 minutes more.
 *
 * No message waits that long when its worker dies: the worker hides the message it runs (a chunk,
 * ten lines, seconds; or a job's completion, up to the whole 15 minutes) for HOLD_MESSAGE_SECONDS
 * only, and holds its work's lease (the chunk's, the completion's) for HOLD_LEASE_MS, both renewed
 * every HOLD_HEARTBEAT_MS while it works (lib/bulk/message-hold.ts). A worker that crashed or timed
 * out stops renewing: its lease lapses within HOLD_LEASE_MS and its message comes back within
 * HOLD_MESSAGE_SECONDS, always after the lease (each renewal sets both, the message 30 s past the
 * lease), so the next delivery finds the work free. A lease as long as the worker's timeout is no
 * longer needed for a completion: a live worker keeps its lease by renewing it, and one that lost it
 * (two renewals failed) and goes on beside the next delivery only repeats steps that change nothing
 * run twice. A message received BULK_MAX_RECEIVE_COUNT times without its work getting done goes to
 * the dead-letter queue, where the reconcile function ends the chunk (its unstored lines fail), or
 * completes the job without its archive, so that the job still completes.
 */
export const BULK_WORKER_TIMEOUT_SECONDS = 900;
export const BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS = BULK_WORKER_TIMEOUT_SECONDS + 180;
export const HOLD_HEARTBEAT_MS = 30_000;
export const HOLD_LEASE_MS = 3 * HOLD_HEARTBEAT_MS;
export const HOLD_MESSAGE_SECONDS = HOLD_LEASE_MS / 1000 + 30;
export const BULK_MAX_RECEIVE_COUNT = 5;
/**
 * How long a message whose worker caught an error (the worker gave its lease up first) stays
 * hidden before it comes back: RETRY_FIRST_DELAY_SECONDS after its first delivery, four times longer
 * after each next one (10 s, 40 s, 160 s, 640 s), a fifth either way, so that chunks failed by the
 * same passing fault (a throttled table, a slow bucket) do not all come back at once. Short for a
 * passing fault, yet its five deliveries span some 14 minutes before the dead-letter queue: a
 * fault that lasts minutes does not fail the lines. Before, every such message waited the queue's
 * whole visibility timeout (18 minutes) each time. A crash or a timeout says nothing: its message
 * comes back when its worker's hold runs out (HOLD_MESSAGE_SECONDS after the last renewal).
 */
export const RETRY_FIRST_DELAY_SECONDS = 10;
export function retryDelaySeconds(receiveCount: number, random: () => number = Math.random): number {
  const delay = RETRY_FIRST_DELAY_SECONDS * 4 ** Math.max(0, receiveCount - 1);
  return Math.min(BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS, Math.round(delay * (0.8 + 0.4 * random())));
}
/**
 * A bulk job's reservation lives this long; a chunk received later than BULK_MAX_RUN_MS after
 * submission renders nothing more (its lines fail), so no PDF is ever stored after the reservation
 * could have been settled by the reconcile function.
 */
export const BULK_MAX_RUN_MS = 24 * 3_600_000;
export const BULK_RESERVATION_LIFETIME_MS = BULK_MAX_RUN_MS + 2 * 3_600_000;

/** A shard's item: a partition key of its own (a spread job), or one item of the job's key (a job stored before). */
function shardKey(job: BulkJobRef, shard: number): { pk: string; sk: string } {
  if (job.bulk?.spread) return { pk: `BULK#${job.id}#${shard}`, sk: 'PROGRESS' };
  return { pk: `BULK#${job.id}`, sk: `SHARD#${String(shard).padStart(6, '0')}` };
}
const chunkShardKey = (job: BulkJobRef, chunk: number) => shardKey(job, shardOf(job.bulk!, chunk));

/**
 * Which job an upload backs (`UPLOAD#<key id>#<upload id>` / `CLAIM`): written before the job's
 * quota is reserved, so one upload backs one job, and kept past the upload's own life (its TTL), so
 * an upload used again after its job ended and removed it is still refused naming that job. A claim
 * whose job was never stored and which is older than UPLOAD_CLAIM_STALE_MS (far past any
 * submission's time) was left by a submission that died: another may take it over.
 */
export interface UploadClaim {
  readonly jobId: string;
  readonly claimedAt: number;
}
export const UPLOAD_CLAIM_STALE_MS = 15 * 60_000;
const uploadClaimKey = (keyId: string, uploadId: string) => ({ pk: `UPLOAD#${keyId}#${uploadId}`, sk: 'CLAIM' });

/** The claim on an upload, if any. */
export async function uploadClaim(store: PdfStore, keyId: string, uploadId: string): Promise<UploadClaim | undefined> {
  const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: uploadClaimKey(keyId, uploadId), ConsistentRead: true }));
  return typeof Item?.jobId === 'string' ? { jobId: Item.jobId, claimedAt: Number(Item.claimedAt) } : undefined;
}

/**
 * Claims an upload for a job: true when it is the job's now (it was free, already the job's, or
 * `replacing` the stale claim seen); false when another job holds it.
 */
export async function claimUpload(store: PdfStore, keyId: string, uploadId: string, jobId: string, now: Date, replacing?: UploadClaim): Promise<boolean> {
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: uploadClaimKey(keyId, uploadId),
        UpdateExpression: 'SET #jobId = :jobId, #claimedAt = :now, #ttl = :ttl',
        ConditionExpression: `attribute_not_exists(#jobId) OR #jobId = :jobId${replacing ? ' OR (#jobId = :seenJob AND #claimedAt = :seenAt)' : ''}`,
        ExpressionAttributeNames: { '#jobId': 'jobId', '#claimedAt': 'claimedAt', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':jobId': jobId,
          ':now': now.getTime(),
          // Past the upload's lifecycle rule and the longest job: the claim outlives what it guards.
          ':ttl': Math.ceil(now.getTime() / 1000) + (UPLOAD_RETENTION_DAYS + 2) * 86_400,
          ...(replacing && { ':seenJob': replacing.jobId, ':seenAt': replacing.claimedAt }),
        },
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return false;
  }
}

/** Gives up a job's claim on its upload (its submission failed before the job was stored). */
export async function releaseUploadClaim(store: PdfStore, keyId: string, uploadId: string, jobId: string): Promise<void> {
  await store.dynamo
    .send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: uploadClaimKey(keyId, uploadId),
        UpdateExpression: 'REMOVE #jobId, #claimedAt',
        ConditionExpression: '#jobId = :jobId',
        ExpressionAttributeNames: { '#jobId': 'jobId', '#claimedAt': 'claimedAt' },
        ExpressionAttributeValues: { ':jobId': jobId },
      }),
    )
    .catch((error: unknown) => {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    });
}

/** One chunk of the plan: consecutive input lines and their bytes in the input, and its lines refused at submission. */
export interface PlannedChunk {
  readonly first: number;
  readonly last: number;
  readonly start: number;
  readonly end: number;
  /**
   * Its lines refused at submission: with their problem (the job's first refused lines), or by
   * number alone (the others, lib/bulk/upload-check.ts PLANNED_PROBLEMS), so a plan does not grow
   * by a message per refused line.
   */
  readonly invalid?: readonly (PlannedProblem | number)[];
}

/** A line refused at submission, with its problem. */
export interface PlannedProblem {
  readonly line: number;
  readonly code: BatchItemCode;
  readonly message: string;
}

/** What a line ended as, kept in its chunk's results until the manifest is written. */
export type LineResult =
  | { readonly line: number; readonly success: true; readonly record: PdfRecord; readonly metadata?: unknown }
  | { readonly line: number; readonly success: false; readonly code: BatchItemCode | 'CANCELLED'; readonly message: string; readonly counted: boolean };

async function putJson(store: PdfStore, key: string, value: unknown, contentType = 'application/json'): Promise<void> {
  await store.s3.send(new PutObjectCommand({ Bucket: store.bucketName, Key: key, Body: JSON.stringify(value), ContentType: contentType }));
}

async function getJson<T>(store: PdfStore, key: string): Promise<T | undefined> {
  try {
    const { Body } = await store.s3.send(new GetObjectCommand({ Bucket: store.bucketName, Key: key }));
    return JSON.parse(await Body!.transformToString()) as T;
  } catch (error) {
    if ((error as Error)?.name === 'NoSuchKey') return undefined;
    throw error;
  }
}

export const putPlan = (store: PdfStore, job: Pick<Job, 'keyId' | 'id'>, plan: readonly PlannedChunk[]) => putJson(store, bulkObjectKey(job, 'plan.json'), plan);
/** A job's plan of chunks; undefined when it is gone. */
export const readPlan = (store: PdfStore, job: Pick<Job, 'keyId' | 'id'>) => getJson<PlannedChunk[]>(store, bulkObjectKey(job, 'plan.json'));
export const putChunkResults = (store: PdfStore, job: Pick<Job, 'keyId' | 'id'>, chunk: number, results: readonly LineResult[]) =>
  putJson(store, bulkObjectKey(job, `chunks/${chunk}.json`), results);
export const readChunkResults = (store: PdfStore, job: Pick<Job, 'keyId' | 'id'>, chunk: number) => getJson<LineResult[]>(store, bulkObjectKey(job, `chunks/${chunk}.json`));

/**
 * Takes a chunk for one worker: `taken` (its lease written, for `leaseMs`), `done` (already done by
 * another delivery) or `busy` (another worker holds a lease that has not run out).
 */
export async function takeChunk(store: PdfStore, job: BulkJobRef, chunk: number, leaseMs: number): Promise<'taken' | 'done' | 'busy'> {
  const now = Date.now();
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: chunkShardKey(job, chunk),
        UpdateExpression: 'SET #lease = :until',
        ConditionExpression: 'attribute_not_exists(#done) AND (attribute_not_exists(#lease) OR #lease < :now)',
        ExpressionAttributeNames: { '#lease': `lease_${chunk}`, '#done': `done_${chunk}` },
        ExpressionAttributeValues: { ':until': now + leaseMs, ':now': now },
      }),
    );
    return 'taken';
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: chunkShardKey(job, chunk), ConsistentRead: true }));
    return Item?.[`done_${chunk}`] !== undefined ? 'done' : 'busy';
  }
}

/**
 * Renews a chunk's lease to `leaseMs` from now, while its worker works (lib/bulk/message-hold.ts):
 * `held`, or `lost` if the chunk is done or its lease is gone (released, or lapsed and taken over by
 * the message's next delivery; that worker's lines are the same lines, stored once whoever renders
 * them, so nothing is charged twice either way).
 */
export async function renewChunk(store: PdfStore, job: BulkJobRef, chunk: number, leaseMs: number): Promise<'held' | 'lost'> {
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: chunkShardKey(job, chunk),
        UpdateExpression: 'SET #lease = :until',
        ConditionExpression: 'attribute_not_exists(#done) AND attribute_exists(#lease)',
        ExpressionAttributeNames: { '#lease': `lease_${chunk}`, '#done': `done_${chunk}` },
        ExpressionAttributeValues: { ':until': Date.now() + leaseMs },
      }),
    );
    return 'held';
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return 'lost';
    throw error;
  }
}

/** The object a finished bulk job's result link names (`manifest` or `archive`), if the job has it. */
export function bulkResultObjectKey(job: Job, name: string): string | undefined {
  if (job.kind !== 'bulk' || job.completedAt === undefined) return undefined;
  if (name === 'manifest') return bulkObjectKey(job, 'manifest.jsonl');
  // Written when asked for and it could be (an archive given up has `archive_error` instead).
  if (name === 'archive' && job.bulk?.archive && (job.result as { archive_url?: unknown } | undefined)?.archive_url) return bulkObjectKey(job, 'archive.zip');
  return undefined;
}

const completionKey = (jobId: string) => ({ pk: `BULK#${jobId}`, sk: 'COMPLETION' });

/**
 * Takes a job's completion for one worker, for `leaseMs` (`taken`), unless another worker holds it
 * and its lease has not run out (`busy`): one worker at a time writes a job's manifest and archive.
 * Kept beside the job's shards, so the local stack's start-up frees it with theirs.
 */
export async function takeCompletion(store: PdfStore, jobId: string, leaseMs: number): Promise<'taken' | 'busy'> {
  const now = Date.now();
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: completionKey(jobId),
        UpdateExpression: 'SET #lease = :until',
        ConditionExpression: 'attribute_not_exists(#lease) OR #lease < :now',
        ExpressionAttributeNames: { '#lease': 'lease_completion' },
        ExpressionAttributeValues: { ':until': now + leaseMs, ':now': now },
      }),
    );
    return 'taken';
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return 'busy';
  }
}

/**
 * Renews a job's completion's lease to `leaseMs` from now, while its worker works
 * (lib/bulk/message-hold.ts): `held`, or `lost` if its lease is gone (given up, or lapsed and taken
 * over by the message's next delivery, which repeats only steps that change nothing run twice).
 */
export async function renewCompletion(store: PdfStore, jobId: string, leaseMs: number): Promise<'held' | 'lost'> {
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: completionKey(jobId),
        UpdateExpression: 'SET #lease = :until',
        ConditionExpression: 'attribute_exists(#lease)',
        ExpressionAttributeNames: { '#lease': 'lease_completion' },
        ExpressionAttributeValues: { ':until': Date.now() + leaseMs },
      }),
    );
    return 'held';
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return 'lost';
    throw error;
  }
}

/** Gives the completion's lease up (the completion failed): the next delivery of its message takes it at once. */
export async function releaseCompletion(store: PdfStore, jobId: string): Promise<void> {
  await store.dynamo.send(
    new UpdateCommand({ TableName: store.tableName, Key: completionKey(jobId), UpdateExpression: 'REMOVE #lease', ExpressionAttributeNames: { '#lease': 'lease_completion' } }),
  );
}

/** Gives a chunk's lease up (its run failed before the chunk was done): the next delivery takes it at once. */
export async function releaseChunk(store: PdfStore, job: BulkJobRef, chunk: number): Promise<void> {
  await store.dynamo.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: chunkShardKey(job, chunk),
      UpdateExpression: 'REMOVE #lease',
      ConditionExpression: 'attribute_not_exists(#done)',
      ExpressionAttributeNames: { '#lease': `lease_${chunk}`, '#done': `done_${chunk}` },
    }),
  ).catch((error: unknown) => {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  });
}

/**
 * Marks a chunk done with its counts, once: a second call for the same chunk changes nothing.
 * Returns how many chunks of its shard are done now.
 */
export async function finishChunk(store: PdfStore, job: BulkJobRef, chunk: number, counts: { succeeded: number; failed: number }): Promise<number> {
  const key = chunkShardKey(job, chunk);
  try {
    const { Attributes } = await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: key,
        UpdateExpression: 'SET #done = :one REMOVE #lease ADD #doneCount :one, #succeeded :succeeded, #failed :failed',
        ConditionExpression: 'attribute_not_exists(#done)',
        ExpressionAttributeNames: {
          '#done': `done_${chunk}`,
          '#lease': `lease_${chunk}`,
          '#doneCount': 'doneCount',
          '#succeeded': 'succeeded',
          '#failed': 'failed',
        },
        ExpressionAttributeValues: { ':one': 1, ':succeeded': counts.succeeded, ':failed': counts.failed },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Number(Attributes?.doneCount ?? 0);
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: key, ConsistentRead: true }));
    return Number(Item?.doneCount ?? 0);
  }
}

/** How many chunks of a shard are done. */
export async function shardDoneCount(store: PdfStore, job: BulkJobRef, shard: number): Promise<number> {
  const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: shardKey(job, shard), ConsistentRead: true }));
  return Number(Item?.doneCount ?? 0);
}

/** Whether a chunk is done (its results are in the bucket). */
export async function isChunkDone(store: PdfStore, job: BulkJobRef, chunk: number): Promise<boolean> {
  const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: chunkShardKey(job, chunk), ConsistentRead: true }));
  return Item?.[`done_${chunk}`] !== undefined;
}

/** Records on the job that one of its shards has every chunk done, once; returns how many shards are full. */
export async function markShardFull(store: PdfStore, jobId: string, shard: number): Promise<number> {
  try {
    const { Attributes } = await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: jobKey(jobId),
        UpdateExpression: 'SET #full = :one ADD #fullShards :one',
        ConditionExpression: 'attribute_not_exists(#full)',
        ExpressionAttributeNames: { '#full': `full_${shard}`, '#fullShards': 'fullShards' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Number(Attributes?.fullShards ?? 0);
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: jobKey(jobId), ConsistentRead: true }));
    return Number(Item?.fullShards ?? 0);
  }
}

/** Shard items read at once while a job's progress is summed (a million lines: 100 shards). */
const SHARD_READS_AT_ONCE = 16;

/**
 * Every item of a job's progress: its shards (a spread job's, one read each, SHARD_READS_AT_ONCE at
 * once; those under the job's own key for a job stored before) and its completion's lease.
 */
async function* progressItems(store: PdfStore, job: BulkJobRef): AsyncGenerator<Record<string, unknown>> {
  const pages = paginateQuery(
    { client: store.dynamo },
    { TableName: store.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `BULK#${job.id}` }, ConsistentRead: true },
  );
  for await (const page of pages) yield* page.Items ?? [];
  if (!job.bulk?.spread) return;
  for (let first = 0; first < job.bulk.shards; first += SHARD_READS_AT_ONCE) {
    const shards = Array.from({ length: Math.min(SHARD_READS_AT_ONCE, job.bulk.shards - first) }, (_, i) => first + i);
    const read = await Promise.all(shards.map((shard) => store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: shardKey(job, shard), ConsistentRead: true }))));
    for (const { Item } of read) if (Item) yield Item;
  }
}

/** A bulk job's progress while it runs: the sums of its shards (its invalid lines are failures from the start). */
export async function bulkProgress(store: PdfStore, job: Job): Promise<{ succeeded: number; failed: number }> {
  let succeeded = 0;
  let failed = job.bulk?.invalid ?? 0;
  for await (const item of progressItems(store, job)) {
    succeeded += Number(item.succeeded ?? 0);
    failed += Number(item.failed ?? 0);
  }
  return { succeeded, failed };
}

/**
 * Ends every chunk lease of a job, and its completion's: the local stack at start-up, when every
 * worker of the run before died with it (in AWS a lease runs out before the message of a dead
 * worker is delivered again).
 */
export async function releaseAllChunkLeases(store: PdfStore, job: BulkJobRef): Promise<number> {
  let released = 0;
  for await (const item of progressItems(store, job)) {
    const leases = Object.keys(item).filter((name) => name.startsWith('lease_'));
    if (leases.length === 0) continue;
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: `REMOVE ${leases.map((_, i) => `#l${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(leases.map((name, i) => [`#l${i}`, name])),
      }),
    );
    released += leases.length;
  }
  return released;
}

/** A queued bulk job becomes running when its first chunk starts. */
export async function markBulkJobRunning(store: PdfStore, jobId: string): Promise<void> {
  await store.dynamo
    .send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: jobKey(jobId),
        UpdateExpression: 'SET #status = :running',
        ConditionExpression: '#status = :queued',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':running': 'running', ':queued': 'queued' },
      }),
    )
    .catch((error: unknown) => {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    });
}

/** Records that every chunk of a bulk job is on the queue. */
export async function markBulkJobEnqueued(store: PdfStore, jobId: string): Promise<void> {
  await store.dynamo.send(
    new UpdateCommand({ TableName: store.tableName, Key: jobKey(jobId), UpdateExpression: 'SET #enqueued = :yes', ExpressionAttributeNames: { '#enqueued': 'enqueued' }, ExpressionAttributeValues: { ':yes': true } }),
  );
}

/**
 * Cancels a bulk job that has not ended: its status becomes `cancelled` at once; its workers start no
 * more lines. Returns the job as it is now, or undefined when there is no such job.
 */
export async function cancelBulkJob(store: PdfStore, jobId: string, now: Date): Promise<Job | undefined> {
  try {
    const { Attributes } = await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: jobKey(jobId),
        UpdateExpression: 'SET #status = :cancelled, #cancelledAt = :now',
        ConditionExpression: '#status IN (:queued, :running) AND #kind = :bulk',
        ExpressionAttributeNames: { '#status': 'status', '#cancelledAt': 'cancelledAt', '#kind': 'kind' },
        ExpressionAttributeValues: { ':cancelled': 'cancelled', ':now': now.toISOString(), ':queued': 'queued', ':running': 'running', ':bulk': 'bulk' },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes ? asJob(Attributes) : undefined;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: jobKey(jobId), ConsistentRead: true }));
    return Item ? asJob(Item) : undefined;
  }
}

/**
 * Fails a bulk job that never started (still `queued`: no worker has marked it running, so no line
 * of it was rendered, and none will be: a worker that takes one of its chunks afterwards finds it
 * ended). One conditional write; false when the job is no longer `queued` (a chunk of it started,
 * it was cancelled, or it ended), and nothing changed.
 */
export async function failQueuedBulkJob(store: PdfStore, job: Job, end: { result: unknown; completedAt: Date }): Promise<boolean> {
  const total = job.bulk?.total ?? 0;
  return writeEnding(store, job.id, { status: 'failed', result: end.result, succeeded: 0, failed: total, completedAt: end.completedAt }, 'queued');
}

/**
 * Records how a bulk job ended, once (false when it had ended already): its status (`succeeded`,
 * `failed`, or `cancelled` kept), its result and counts; it leaves the pending list.
 */
export async function finishBulkJob(
  store: PdfStore,
  job: Job,
  end: { status: 'succeeded' | 'failed'; result: unknown; succeeded: number; failed: number; completedAt: Date },
): Promise<boolean> {
  for (let seen: Job | undefined = job; seen && seen.completedAt === undefined; ) {
    const status = seen.status === 'cancelled' ? 'cancelled' : end.status;
    if (await writeEnding(store, job.id, { ...end, status }, seen.status)) return true;
    const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: jobKey(job.id), ConsistentRead: true }));
    seen = Item ? asJob(Item) : undefined;
  }
  return false;
}

/**
 * A job's ending in one conditional write: its status, result and counts, and it leaves the
 * pending list; only while it has not ended and its status is still `expected` (false otherwise,
 * nothing changed).
 */
async function writeEnding(
  store: PdfStore,
  jobId: string,
  end: { status: string; result: unknown; succeeded: number; failed: number; completedAt: Date },
  expected: string,
): Promise<boolean> {
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: jobKey(jobId),
        UpdateExpression: 'SET #status = :status, #result = :result, #completedAt = :completedAt, #succeeded = :succeeded, #failed = :failed REMOVE #p, #s',
        ConditionExpression: 'attribute_not_exists(#completedAt) AND #status = :expected',
        ExpressionAttributeNames: {
          '#status': 'status',
          '#result': 'result',
          '#completedAt': 'completedAt',
          '#succeeded': 'succeeded',
          '#failed': 'failed',
          '#p': ENTITY_INDEX.partitionKey,
          '#s': ENTITY_INDEX.sortKey,
        },
        ExpressionAttributeValues: {
          ':status': end.status,
          ':result': end.result,
          ':completedAt': end.completedAt.toISOString(),
          ':succeeded': end.succeeded,
          ':failed': end.failed,
          ':expected': expected,
        },
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return false;
  }
}
