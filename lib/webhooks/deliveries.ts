/**
 * Webhook deliveries, per Standard Webhooks: each event is one delivery with one `webhook-id`,
 * signed with the key's `whsec_` secret (the `standardwebhooks` package) at every try, and tried
 * until the receiver answers 2xx or the retry schedule runs out (settings.webhookRetryScheduleSeconds:
 * about 27.6 hours by default).
 *
 * Durable: a delivery is an item of the one table before its first try, so a crash or a restart
 * loses none. It names what it reports (a job) rather than carrying the body: the body is built
 * from the finished job at each try (the same bytes every time: a finished job does not change),
 * so a batch job's result, which may be megabytes, is never copied into an item. While it waits
 * it is listed in the entity index under `WEBHOOK_DUE` by the time of its next try; whatever sends
 * due deliveries (the pool of senders in the scheduled webhooks function in AWS and in the local
 * stack, fair between API keys, and the job itself right after it finishes) claims each one with a
 * conditional write before trying it, so two senders never try the same delivery at once.
 *
 *   WEBHOOK#<webhook id> / WEBHOOK   one delivery: where, what, how many tries, what happened
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { webhookSecretsOf, type KeyStore } from '#lib/accounts/keys.ts';
import { logger } from '#lib/observability/logger.ts';
import { randomBase62 } from '#lib/random.ts';
import { ENTITY_INDEX } from '#lib/storage/table.ts';
import type { EgressPolicy } from '#lib/egress/destinations.ts';
import { pickDueDeliveries } from './picking.ts';
import { sendWebhook, type SendOutcome } from './send.ts';

const ENTITY = 'WEBHOOK';
const DUE = 'WEBHOOK_DUE';
const DAY_MS = 86_400_000;
/** Deliveries are kept this long after they were made, for support, then expire. */
const DELIVERY_RETENTION_DAYS = 7;
/**
 * How long a claimed delivery is held by its sender: past it, a sender that died while trying is
 * presumed gone and the delivery is due again (same webhook-id). Longer than any one try.
 */
const CLAIM_MS = 60_000;

export type WebhookEventType = 'pdf.job.completed' | 'pdf.job.failed';

/** What a delivery sends: `{ type, timestamp, data }` (shared/spec/beyond.md). */
export interface WebhookEvent {
  readonly type: WebhookEventType;
  readonly timestamp: string;
  readonly data: unknown;
}

export interface Delivery {
  /** The `webhook-id`: the same on every try. */
  readonly id: string;
  readonly keyId: string;
  readonly jobId: string;
  readonly url: string;
  readonly status: 'pending' | 'delivered' | 'failed';
  /** Tries made so far. */
  readonly attempts: number;
  readonly createdAt: string;
  /** When it is due next (pending only): its place in the index. */
  readonly nextAttemptAt?: string;
  /** What the last try came to. */
  readonly lastOutcome?: string;
}

export interface WebhookDeps {
  readonly store: KeyStore;
  readonly egress: EgressPolicy;
  readonly timeoutMs: number;
  /** Seconds between tries; given up after the last. */
  readonly retryScheduleSeconds: readonly number[];
  /** The event a delivery reports, from the finished job it names; undefined while the job is not finished yet. */
  readonly eventOf: (delivery: Delivery) => Promise<WebhookEvent | undefined>;
}

const deliveryKey = (id: string) => ({ pk: `${ENTITY}#${id}`, sk: ENTITY });
const dueSortKey = (at: string, id: string) => `${at}#${id}`;

function asDelivery(item: Record<string, unknown>): Delivery {
  const { pk: _pk, sk: _sk, ttl: _ttl, [ENTITY_INDEX.partitionKey]: _p, [ENTITY_INDEX.sortKey]: _s, ...delivery } = item;
  return delivery as unknown as Delivery;
}

/**
 * Records that a job's end is to be delivered to `url`, due at once. Under an `id` the caller
 * decides, recording it again does nothing: one event, one delivery.
 */
export async function enqueueDelivery(
  store: KeyStore,
  event: { id?: string; keyId: string; jobId: string; url: string; now: Date },
): Promise<Delivery> {
  const id = event.id ?? 'msg_' + randomBase62(24);
  const createdAt = event.now.toISOString();
  const delivery: Delivery = {
    id,
    keyId: event.keyId,
    jobId: event.jobId,
    url: event.url,
    status: 'pending',
    attempts: 0,
    createdAt,
    nextAttemptAt: createdAt,
  };
  try {
    await store.client.send(
      new PutCommand({
        TableName: store.tableName,
        Item: {
          ...deliveryKey(id),
          [ENTITY_INDEX.partitionKey]: DUE,
          [ENTITY_INDEX.sortKey]: dueSortKey(createdAt, id),
          ...delivery,
          ttl: Math.ceil((event.now.getTime() + DELIVERY_RETENTION_DAYS * DAY_MS) / 1000),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (error) {
    // Recorded before (a run of the job that died after it): that one is sent, and this is not.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  return delivery;
}

/** Where a read of the due list stopped, for the next read to go on from. */
export type DueCursor = Record<string, unknown>;

/**
 * Deliveries due by `now`, soonest first, at most `limit` (read a page at a time), from the start
 * of the due list or from where an earlier read stopped (`after`). `next` is where this read
 * stopped when the list goes on past `limit`.
 */
export async function dueDeliveries(
  store: KeyStore,
  now: Date,
  { limit = 100, after }: { limit?: number; after?: DueCursor } = {},
): Promise<{ deliveries: Delivery[]; next?: DueCursor }> {
  const deliveries: Delivery[] = [];
  let cursor = after;
  do {
    const { Items, LastEvaluatedKey } = await store.client.send(
      new QueryCommand({
        TableName: store.tableName,
        IndexName: ENTITY_INDEX.name,
        KeyConditionExpression: '#p = :due AND #s <= :now',
        ExpressionAttributeNames: { '#p': ENTITY_INDEX.partitionKey, '#s': ENTITY_INDEX.sortKey },
        // Sort keys are `<time>#<id>`: '~' sorts after every character of an id.
        ExpressionAttributeValues: { ':due': DUE, ':now': `${now.toISOString()}~` },
        Limit: limit - deliveries.length,
        ...(cursor && { ExclusiveStartKey: cursor }),
      }),
    );
    deliveries.push(...(Items ?? []).map(asDelivery));
    cursor = LastEvaluatedKey;
  } while (cursor && deliveries.length < limit);
  return { deliveries, ...(cursor && { next: cursor }) };
}

/** When the soonest pending delivery is due (one being tried: when its claim lapses), if any is pending. */
async function soonestDue(store: KeyStore): Promise<Date | undefined> {
  const { Items } = await store.client.send(
    new QueryCommand({
      TableName: store.tableName,
      IndexName: ENTITY_INDEX.name,
      KeyConditionExpression: '#p = :due',
      ExpressionAttributeNames: { '#p': ENTITY_INDEX.partitionKey },
      ExpressionAttributeValues: { ':due': DUE },
      Limit: 1,
    }),
  );
  const next = Items?.[0]?.nextAttemptAt;
  return typeof next === 'string' ? new Date(next) : undefined;
}

/**
 * Moves a pending delivery's next try to `at`, only if nobody moved it since it was read (its
 * `nextAttemptAt` is still `expected`): the one conditional write that claims it.
 */
async function reschedule(store: KeyStore, delivery: Delivery, at: Date, set: { attempts?: number; lastOutcome?: string } = {}): Promise<boolean> {
  const next = at.toISOString();
  try {
    await store.client.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: deliveryKey(delivery.id),
        UpdateExpression: `SET #next = :next, #s = :sortKey${set.attempts !== undefined ? ', #attempts = :attempts' : ''}${set.lastOutcome !== undefined ? ', #last = :last' : ''}`,
        ConditionExpression: '#status = :pending AND #next = :expected',
        ExpressionAttributeNames: {
          '#next': 'nextAttemptAt',
          '#s': ENTITY_INDEX.sortKey,
          '#status': 'status',
          ...(set.attempts !== undefined && { '#attempts': 'attempts' }),
          ...(set.lastOutcome !== undefined && { '#last': 'lastOutcome' }),
        },
        ExpressionAttributeValues: {
          ':next': next,
          ':sortKey': dueSortKey(next, delivery.id),
          ':pending': 'pending',
          ':expected': delivery.nextAttemptAt,
          ...(set.attempts !== undefined && { ':attempts': set.attempts }),
          ...(set.lastOutcome !== undefined && { ':last': set.lastOutcome }),
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** Ends a delivery (delivered, or given up): it leaves the due list. */
async function closeDelivery(store: KeyStore, delivery: Delivery, end: { status: 'delivered' | 'failed'; attempts: number; lastOutcome: string }) {
  await store.client.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: deliveryKey(delivery.id),
      UpdateExpression: 'SET #status = :status, #attempts = :attempts, #last = :last REMOVE #next, #p, #s',
      ConditionExpression: '#status = :pending',
      ExpressionAttributeNames: {
        '#status': 'status',
        '#attempts': 'attempts',
        '#last': 'lastOutcome',
        '#next': 'nextAttemptAt',
        '#p': ENTITY_INDEX.partitionKey,
        '#s': ENTITY_INDEX.sortKey,
      },
      ExpressionAttributeValues: { ':status': end.status, ':attempts': end.attempts, ':last': end.lastOutcome, ':pending': 'pending' },
    }),
  );
}

/**
 * The Standard Webhooks headers of one try of `body`: the same id every time, this try's time, and
 * one `v1,` signature per secret, space-separated (the current secret's first, then those a rotation
 * keeps signing for its overlap), so a receiver holding any of them verifies it.
 */
export function signDelivery(secrets: readonly string[], id: string, body: string, at: Date): Record<string, string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, new Date(timestamp * 1000), body)).join(' '),
  };
}

/**
 * One try of a due delivery, if this sender wins its claim: signed, sent through the egress rules,
 * and then closed (2xx, or the schedule ran out) or put back for its next try.
 */
export async function attemptDelivery(deps: WebhookDeps, delivery: Delivery, now = new Date()): Promise<SendOutcome | undefined> {
  // Recorded just before its job was marked finished: it waits for that, still due.
  const event = await deps.eventOf(delivery);
  if (!event) return undefined;
  const claimedUntil = new Date(now.getTime() + CLAIM_MS);
  if (!(await reschedule(deps.store, delivery, claimedUntil))) return undefined;
  const claimed = { ...delivery, nextAttemptAt: claimedUntil.toISOString() };
  const secrets = await webhookSecretsOf(deps.store, delivery.keyId, now);
  const secret = secrets && [secrets.current, ...secrets.retiring.map((entry) => entry.secret)];
  const body = JSON.stringify(event);
  const outcome: SendOutcome = secret
    ? await sendWebhook(delivery.url, signDelivery(secret, delivery.id, body, now), body, { ...deps.egress, timeoutMs: deps.timeoutMs })
    : { delivered: false, reason: 'the API key no longer exists' };
  const attempts = delivery.attempts + 1;
  const lastOutcome = outcome.delivered ? `delivered: ${outcome.status}` : outcome.reason;
  const wait = deps.retryScheduleSeconds[attempts - 1];
  if (outcome.delivered || wait === undefined || !secret) {
    await closeDelivery(deps.store, claimed, { status: outcome.delivered ? 'delivered' : 'failed', attempts, lastOutcome });
    if (!outcome.delivered) logger.warn('webhook delivery given up', { webhook_id: delivery.id, job_id: delivery.jobId, attempts, outcome: lastOutcome });
  } else {
    await reschedule(deps.store, claimed, new Date(Date.now() + wait * 1000), { attempts, lastOutcome });
    logger.info('webhook delivery failed; will retry', { webhook_id: delivery.id, job_id: delivery.jobId, attempts, retry_in_s: wait, outcome: lastOutcome });
  }
  return outcome;
}

export interface SendingOptions {
  /** Tries under way at once, all keys together. */
  readonly concurrency?: number;
  /** Tries under way at once for one API key: a key's slow receivers hold no more sender slots than this. */
  readonly perKeyConcurrency?: number;
  /** How often the due list is read again for deliveries that came due. */
  readonly pollIntervalMs?: number;
  /** The function's time left: no try starts that could outlast it (the rest stay due). */
  readonly remainingMs?: () => number;
  /**
   * Keep sending until this aborts (the local stack). Without it, sending ends once nothing is
   * under way, due, or coming due before the time left runs out (the scheduled function).
   */
  readonly stop?: AbortSignal;
}

/** Room kept after a try's WEBHOOK_TIMEOUT_MS for recording its outcome before the function's time is up. */
const RECORDING_MS = 5_000;
/** Most of the due list one read takes in: a longer list is read on from there next time, then from its start again. */
const DUE_READ_LIMIT = 1_000;

/**
 * Sends due deliveries as a pool that never waits for a round: whenever a sender slot is free it
 * starts the next due delivery, picked fairly between API keys (lib/webhooks/picking.ts: round-robin,
 * at most `perKeyConcurrency` tries of one key under way), and it reads the due list again every
 * `pollIntervalMs`, so a delivery coming due starts within about that long however slow other keys'
 * receivers are. Each try is still claimed with a conditional write first, so other senders (the
 * job's own first try, an overlapping scheduled run) never try it at the same time. Returns how
 * many tries were made.
 */
export async function sendDueDeliveries(
  deps: WebhookDeps,
  { concurrency = 16, perKeyConcurrency = 2, pollIntervalMs = 2_000, remainingMs, stop }: SendingOptions = {},
): Promise<number> {
  const underWay = new Map<string, Promise<void>>();
  const underWayByKey = new Map<string, number>();
  let candidates: Delivery[] = [];
  let cursor: DueCursor | undefined;
  let readAt = -Infinity;
  let tried = 0;
  let wake: () => void = () => undefined;
  const mayStart = () => !stop?.aborted && (remainingMs ? remainingMs() > deps.timeoutMs + RECORDING_MS : true);

  const start = (delivery: Delivery) => {
    underWayByKey.set(delivery.keyId, (underWayByKey.get(delivery.keyId) ?? 0) + 1);
    const attempt = attemptDelivery(deps, delivery, new Date())
      .then((outcome) => void (outcome && tried++))
      .catch((error: unknown) => logger.error('webhook delivery could not be recorded', { webhook_id: delivery.id, error: (error as Error).message }))
      .finally(() => {
        underWay.delete(delivery.id);
        const left = (underWayByKey.get(delivery.keyId) ?? 1) - 1;
        if (left > 0) underWayByKey.set(delivery.keyId, left);
        else underWayByKey.delete(delivery.keyId);
        wake();
      });
    underWay.set(delivery.id, attempt);
  };

  while (mayStart()) {
    let freeSlots = concurrency - underWay.size;
    const reading = freeSlots > 0 && Date.now() - readAt >= pollIntervalMs;
    if (reading) {
      readAt = Date.now();
      try {
        const read = await dueDeliveries(deps.store, new Date(), { limit: DUE_READ_LIMIT, after: cursor });
        candidates = read.deliveries;
        cursor = read.next;
      } catch (error) {
        logger.error('due webhook deliveries could not be read', { error: (error as Error).message });
        candidates = [];
      }
      freeSlots = concurrency - underWay.size;
    }
    // A delivery read while it was being tried is not due again: its claim moved it on.
    candidates = candidates.filter((delivery) => !underWay.has(delivery.id));
    const picked = pickDueDeliveries(candidates, { freeSlots, perKeyLimit: perKeyConcurrency, inFlightByKey: underWayByKey });
    if (picked.length > 0) {
      const taken = new Set(picked);
      candidates = candidates.filter((delivery) => !taken.has(delivery));
      for (const delivery of picked) start(delivery);
    }
    if (!stop && reading && underWay.size === 0 && candidates.length === 0 && !cursor) {
      // Idle: stay only for a delivery that comes due while a try could still start.
      const window = remainingMs ? remainingMs() - deps.timeoutMs - RECORDING_MS : 0;
      const soonest = window > 0 ? await soonestDue(deps.store).catch(() => undefined) : undefined;
      if (!soonest || soonest.getTime() > Date.now() + window) break;
    }
    // Until a try ends (a slot frees), the due list is to be read again (only worth it with a slot
    // free), or sending stops.
    await new Promise<void>((resolve) => {
      const timer = underWay.size < concurrency ? setTimeout(done, Math.max(0, readAt + pollIntervalMs - Date.now())) : undefined;
      stop?.addEventListener('abort', done, { once: true });
      wake = done;
      function done() {
        clearTimeout(timer);
        stop?.removeEventListener('abort', done);
        wake = () => undefined;
        resolve();
      }
    });
  }
  await Promise.all(underWay.values());
  return tried;
}
