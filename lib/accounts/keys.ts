/**
 * API keys: issued once in plaintext, stored only as a SHA-256 hash.
 *
 * A key carries about 238 random bits, so a fast hash is the right tool (no salt or slow KDF
 * needed: there is nothing to brute-force). Authentication is a consistent read of the item named
 * by the hash of the presented key (requests of one process presenting the same key while it is
 * being read share that read); a revoked key is refused from the next read on.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { GetCommand, paginateQuery, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomBase62 } from '#lib/random.ts';
import { ENTITY_INDEX } from '#lib/storage/table.ts';
import { TIERS, type TierLimits, type TierName } from './tiers.ts';

export const API_KEY_PREFIX = 'pdfk_';
const API_KEY_PATTERN = /^pdfk_[0-9A-Za-z]{40}$/;
const ENTITY = 'APIKEY';

/** What the service knows about the caller once a key is accepted. */
export interface ApiKey {
  readonly keyId: string;
  readonly tier: TierName;
  readonly name: string;
  readonly createdAt: string;
  readonly revokedAt?: string;
  /** Per-key overrides of the tier's limits (enterprise "custom"). */
  readonly rateLimitPerMinute?: number;
  readonly monthlyQuota?: number;
}

export interface KeyStore {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

/**
 * A key's webhook signing secret, in Standard Webhooks' form: `whsec_` and 32 random bytes in
 * base64 (lib/webhooks/deliveries.ts signs with it). Stored as is: signing needs the secret itself.
 */
export function newWebhookSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64');
}

export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

/** The limits in force for a key: its tier's, with the key's own overrides on top. */
export function limitsFor(key: ApiKey): TierLimits {
  const tier = TIERS[key.tier];
  return {
    ...tier,
    rateLimitPerMinute: key.rateLimitPerMinute ?? tier.rateLimitPerMinute,
    monthlyQuota: key.monthlyQuota ?? tier.monthlyQuota,
  };
}

export async function createApiKey(
  store: KeyStore,
  input: { tier: TierName; name?: string; rateLimitPerMinute?: number; monthlyQuota?: number; now?: Date },
): Promise<{ apiKey: string; key: ApiKey; webhookSecret: string }> {
  const apiKey = API_KEY_PREFIX + randomBase62(40);
  const webhookSecret = newWebhookSecret();
  const key: ApiKey = {
    keyId: 'key_' + randomBase62(16),
    tier: input.tier,
    name: input.name ?? '',
    createdAt: (input.now ?? new Date()).toISOString(),
    ...(input.rateLimitPerMinute !== undefined && { rateLimitPerMinute: input.rateLimitPerMinute }),
    ...(input.monthlyQuota !== undefined && { monthlyQuota: input.monthlyQuota }),
  };
  const hash = hashApiKey(apiKey);
  await store.client.send(
    new PutCommand({
      TableName: store.tableName,
      Item: {
        pk: `${ENTITY}#${hash}`,
        sk: ENTITY,
        [ENTITY_INDEX.partitionKey]: ENTITY,
        [ENTITY_INDEX.sortKey]: key.keyId,
        keyHash: hash,
        webhookSecret,
        ...key,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return { apiKey, key, webhookSecret };
}

/** Reads of key items under way, by table and hash (see keyItemByHash). */
const keyReads = new Map<string, Promise<Record<string, unknown> | undefined>>();

/**
 * The item of the key with this hash. Requests presenting the same key while a read of it is under
 * way share that read instead of each making its own: where one process serves many requests at
 * once (the local stack), a key's flood of hundreds of simultaneous requests costs one read, not
 * hundreds queued ahead of everything else (a Lambda container serves one request at a time, so
 * there nothing is ever shared). A request that joins a read sees the key as it was when that read
 * began, a moment before the request arrived: a key revoked during that moment may let those few
 * requests in, never one that arrives after the read.
 */
function keyItemByHash(store: KeyStore, hash: string): Promise<Record<string, unknown> | undefined> {
  const id = `${store.tableName}\n${hash}`;
  let read = keyReads.get(id);
  if (!read) {
    read = store.client
      .send(new GetCommand({ TableName: store.tableName, Key: { pk: `${ENTITY}#${hash}`, sk: ENTITY }, ConsistentRead: true }))
      .then(({ Item }) => Item)
      .finally(() => keyReads.delete(id));
    keyReads.set(id, read);
  }
  return read;
}

/**
 * The key named by an `Authorization: Bearer <key>` header, or undefined when the header is
 * missing or malformed, or the key is unknown or revoked.
 */
export async function findActiveKey(store: KeyStore, authorization: string | undefined): Promise<ApiKey | undefined> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const presented = match?.[1];
  if (!presented || !API_KEY_PATTERN.test(presented)) return undefined;

  const hash = hashApiKey(presented);
  const Item = await keyItemByHash(store, hash);
  // The item was found by this very hash, so the comparison can only fail on a corrupted item;
  // it is still done in constant time so that no code path compares secrets byte by byte.
  if (!Item || typeof Item.keyHash !== 'string') return undefined;
  if (!timingSafeEqual(Buffer.from(Item.keyHash, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
  if (Item.revokedAt) return undefined;
  return toApiKey(Item);
}

export async function listApiKeys(store: KeyStore): Promise<ApiKey[]> {
  const keys: ApiKey[] = [];
  const pages = paginateQuery(
    { client: store.client },
    {
      TableName: store.tableName,
      IndexName: ENTITY_INDEX.name,
      KeyConditionExpression: '#p = :entity',
      ExpressionAttributeNames: { '#p': ENTITY_INDEX.partitionKey },
      ExpressionAttributeValues: { ':entity': ENTITY },
    },
  );
  for await (const page of pages) keys.push(...(page.Items ?? []).map(toApiKey));
  return keys;
}

/** A key's item found by its id (through the entity index), or undefined. */
async function keyItemById(store: KeyStore, keyId: string): Promise<Record<string, unknown> | undefined> {
  const { Items } = await store.client.send(
    new QueryCommand({
      TableName: store.tableName,
      IndexName: ENTITY_INDEX.name,
      KeyConditionExpression: '#p = :entity AND #s = :keyId',
      ExpressionAttributeNames: { '#p': ENTITY_INDEX.partitionKey, '#s': ENTITY_INDEX.sortKey },
      ExpressionAttributeValues: { ':entity': ENTITY, ':keyId': keyId },
    }),
  );
  return Items?.[0];
}

/**
 * Sets a key's webhook signing secret: a new one (`rotate`), or one only where the key has none
 * (keys made before webhooks existed). Returns the secret in force, or undefined for an unknown key.
 */
async function setWebhookSecret(store: KeyStore, keyId: string, { rotate }: { rotate: boolean }): Promise<string | undefined> {
  const item = await keyItemById(store, keyId);
  if (!item) return undefined;
  if (!rotate && typeof item.webhookSecret === 'string') return item.webhookSecret;
  const { Attributes } = await store.client.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: { pk: item.pk, sk: item.sk },
      UpdateExpression: rotate ? 'SET webhookSecret = :secret' : 'SET webhookSecret = if_not_exists(webhookSecret, :secret)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':secret': newWebhookSecret() },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return String(Attributes?.webhookSecret);
}

/** The secret a key's webhooks are signed with (made on first use for a key that has none). */
export async function webhookSecretOf(store: KeyStore, keyId: string): Promise<string | undefined> {
  return setWebhookSecret(store, keyId, { rotate: false });
}

/** Replaces a key's webhook signing secret; deliveries from now on, retries included, use the new one. */
export async function rotateWebhookSecret(store: KeyStore, keyId: string): Promise<string | undefined> {
  return setWebhookSecret(store, keyId, { rotate: true });
}

/** Whether the key with this id exists and is not revoked (an asynchronous job checks before each run). */
export async function isKeyActive(store: KeyStore, keyId: string): Promise<boolean> {
  const item = await keyItemById(store, keyId);
  return item !== undefined && !item.revokedAt;
}

/** Revokes a key by its id. Returns false when no such key exists. */
export async function revokeApiKey(store: KeyStore, keyId: string, now = new Date()): Promise<boolean> {
  const item = await keyItemById(store, keyId);
  if (!item) return false;
  await store.client.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: { pk: item.pk, sk: item.sk },
      UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':now': now.toISOString() },
    }),
  );
  return true;
}

function toApiKey(item: Record<string, unknown>): ApiKey {
  return {
    keyId: String(item.keyId),
    tier: item.tier as TierName,
    name: String(item.name ?? ''),
    createdAt: String(item.createdAt),
    ...(typeof item.revokedAt === 'string' && { revokedAt: item.revokedAt }),
    ...(typeof item.rateLimitPerMinute === 'number' && { rateLimitPerMinute: item.rateLimitPerMinute }),
    ...(typeof item.monthlyQuota === 'number' && { monthlyQuota: item.monthlyQuota }),
  };
}
