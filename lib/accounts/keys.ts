/**
 * API keys: issued once in plaintext, stored only as a SHA-256 hash.
 *
 * A key carries about 238 random bits, so a fast hash is the right tool (no salt or slow KDF
 * needed: there is nothing to brute-force). Authentication is a consistent read of the item named
 * by the hash of the presented key (requests of one process presenting the same key while it is
 * being read share that read); a revoked key is refused from the next read on.
 *
 * A key (the account: its id, tier, limits, webhook secret, and everything it owns, which is
 * owned by its id) may have several plaintext keys at once while one replaces another: `rotateApiKey`
 * issues a new one and gives the earlier ones an end (`retiresAt`), after which they are refused.
 * The key's item is the one source of truth for which plaintext keys are in force (its
 * `credentials`, by hash); a later plaintext key is found by its hash through an alias item that
 * only points at the key's item, so revoking or re-tiering the key applies to all of them at once.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { DeleteCommand, GetCommand, paginateQuery, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomBase62 } from '#lib/random.ts';
import { ENTITY_INDEX, TTL_ATTRIBUTE } from '#lib/storage/table.ts';
import { TIERS, type TierLimits, type TierName } from './tiers.ts';

export const API_KEY_PREFIX = 'pdfk_';
const API_KEY_PATTERN = /^pdfk_[0-9A-Za-z]{40}$/;
const ENTITY = 'APIKEY';
/** Longest overlap a rotation may give the keys (or webhook secrets) it replaces. */
export const MAX_ROTATION_OVERLAP_SECONDS = 30 * 24 * 3600;
/** How long an alias item of a retired plaintext key is kept (TTL) once it is retired: nothing reads it after its end. */
const RETIRED_ALIAS_KEPT_SECONDS = 24 * 3600;
/** How many characters of a plaintext key are kept, so an operator can tell which one a client uses. */
const ENDS_WITH_CHARS = 4;

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

/**
 * One plaintext key of a key, as its item records it (by hash): when it was issued, its last
 * characters, and when it stops being accepted (set when a newer one replaced it).
 */
export interface Credential {
  readonly createdAt: string;
  readonly endsWith?: string;
  readonly retiresAt?: string;
}

/** A key's plaintext keys, by hash. */
export type Credentials = Readonly<Record<string, Credential>>;

/** A webhook signing secret that still signs beside the current one until `retiresAt` (a rotation's overlap). */
export interface RetiringSecret {
  readonly secret: string;
  readonly retiresAt: string;
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
        credentials: { [hash]: newCredential(apiKey, key.createdAt) },
        ...key,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return { apiKey, key, webhookSecret };
}

function newCredential(apiKey: string, createdAt: string): Credential {
  return { createdAt, endsWith: apiKey.slice(-ENDS_WITH_CHARS) };
}

/** A key's plaintext keys, by hash: those its item lists, or (an item from before rotations) its own. */
function credentialsOf(item: Record<string, unknown>): Credentials {
  if (item.credentials && typeof item.credentials === 'object') return item.credentials as Credentials;
  return { [String(item.keyHash)]: { createdAt: String(item.createdAt) } };
}

/** Whether the plaintext key with this hash is accepted for the key whose item this is, at `now`. */
export function acceptsCredential(credentials: Credentials, hash: string, now: Date): boolean {
  const credential = credentials[hash];
  if (!credential) return false;
  return credential.retiresAt === undefined || Date.parse(credential.retiresAt) > now.getTime();
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
  return keyItemByPk(store, `${ENTITY}#${hash}`);
}

function keyItemByPk(store: KeyStore, pk: string): Promise<Record<string, unknown> | undefined> {
  const id = `${store.tableName}\n${pk}`;
  let read = keyReads.get(id);
  if (!read) {
    read = store.client
      .send(new GetCommand({ TableName: store.tableName, Key: { pk, sk: ENTITY }, ConsistentRead: true }))
      .then(({ Item }) => Item)
      .finally(() => keyReads.delete(id));
    keyReads.set(id, read);
  }
  return read;
}

/**
 * The key named by an `Authorization: Bearer <key>` header, or undefined when the header is
 * missing or malformed, or the key is unknown, revoked, or a plaintext key a rotation retired
 * (past its overlap). A plaintext key issued by a rotation costs a second read: its alias, then
 * the key's item.
 */
export async function findActiveKey(store: KeyStore, authorization: string | undefined, now = new Date()): Promise<ApiKey | undefined> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const presented = match?.[1];
  if (!presented || !API_KEY_PATTERN.test(presented)) return undefined;

  const hash = hashApiKey(presented);
  const Item = await keyItemByHash(store, hash);
  // The item was found by this very hash, so the comparison can only fail on a corrupted item;
  // it is still done in constant time so that no code path compares secrets byte by byte.
  if (!Item || typeof Item.keyHash !== 'string') return undefined;
  if (!timingSafeEqual(Buffer.from(Item.keyHash, 'hex'), Buffer.from(hash, 'hex'))) return undefined;
  const account = typeof Item.accountPk === 'string' ? await keyItemByPk(store, Item.accountPk) : Item;
  if (!account || account.revokedAt) return undefined;
  if (!acceptsCredential(credentialsOf(account), hash, now)) return undefined;
  return toApiKey(account);
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

/** A key's item as it is now (the index is read eventually consistent; the item itself is read again, consistently). */
async function currentKeyItem(store: KeyStore, keyId: string): Promise<Record<string, unknown> | undefined> {
  const indexed = await keyItemById(store, keyId);
  if (!indexed) return undefined;
  const { Item } = await store.client.send(new GetCommand({ TableName: store.tableName, Key: { pk: indexed.pk, sk: ENTITY }, ConsistentRead: true }));
  return Item;
}

/** Thrown when a key changed between its read and a write that expected it unchanged (another operator's change): run it again. */
export class KeyChangedError extends Error {
  constructor(keyId: string) {
    super(`Key ${keyId} was changed by someone else at the same moment; nothing was changed here, run the command again.`);
    this.name = 'KeyChangedError';
  }
}

/** Thrown when a revoked key is asked to rotate or change tier. */
export class KeyRevokedError extends Error {
  constructor(keyId: string) {
    super(`Key ${keyId} is revoked; it cannot be changed. Create a new key instead.`);
    this.name = 'KeyRevokedError';
  }
}

function isConditionFailure(error: unknown): boolean {
  return (error as { name?: string }).name === 'ConditionalCheckFailedException';
}

function secondsFrom(now: Date, seconds: number): string {
  return new Date(now.getTime() + seconds * 1000).toISOString();
}

function checkOverlap(overlapSeconds: number): void {
  if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_ROTATION_OVERLAP_SECONDS) {
    throw new RangeError(`The overlap must be a whole number of seconds from 0 to ${MAX_ROTATION_OVERLAP_SECONDS} (30 days)`);
  }
}

/** The webhook secrets of an item still signing beside its current one at `now`. */
function retiringSecretsOf(item: Record<string, unknown>, now: Date): RetiringSecret[] {
  const list = Array.isArray(item.retiringWebhookSecrets) ? (item.retiringWebhookSecrets as RetiringSecret[]) : [];
  return list.filter((entry) => Date.parse(entry.retiresAt) > now.getTime());
}

/** A key's webhook signing secrets at `now`: the current one, and those a rotation keeps signing beside it until their end. */
export interface WebhookSecrets {
  readonly current: string;
  readonly retiring: readonly RetiringSecret[];
}

/**
 * The secrets a key's webhooks are signed with at `now`, the current one first (one is made, on
 * first use, for a key that has none: keys made before webhooks existed), or undefined for an
 * unknown key. A delivery carries one signature per secret (lib/webhooks/deliveries.ts).
 */
export async function webhookSecretsOf(store: KeyStore, keyId: string, now = new Date()): Promise<WebhookSecrets | undefined> {
  const item = await keyItemById(store, keyId);
  if (!item) return undefined;
  if (typeof item.webhookSecret === 'string') return { current: item.webhookSecret, retiring: retiringSecretsOf(item, now) };
  const { Attributes } = await store.client.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: { pk: item.pk, sk: item.sk },
      UpdateExpression: 'SET webhookSecret = if_not_exists(webhookSecret, :secret)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':secret': newWebhookSecret() },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return { current: String(Attributes?.webhookSecret), retiring: retiringSecretsOf(Attributes ?? {}, now) };
}

/**
 * Replaces a key's webhook signing secret. For `overlapSeconds` the replaced secret keeps signing
 * beside the new one (every delivery, retries included, carries a signature by each), so receivers
 * can move to the new secret one by one without a delivery failing verification; then only the new
 * one signs. Secrets an earlier rotation kept signing keep their own end, never a later one.
 * Returns the secrets in force afterwards, or undefined for an unknown key.
 */
export async function rotateWebhookSecret(
  store: KeyStore,
  keyId: string,
  { overlapSeconds, now = new Date() }: { overlapSeconds: number; now?: Date },
): Promise<WebhookSecrets | undefined> {
  checkOverlap(overlapSeconds);
  const item = await currentKeyItem(store, keyId);
  if (!item) return undefined;
  const previous = typeof item.webhookSecret === 'string' ? item.webhookSecret : undefined;
  const end = secondsFrom(now, overlapSeconds);
  const retiring = [
    ...(previous !== undefined && overlapSeconds > 0 ? [{ secret: previous, retiresAt: end }] : []),
    ...retiringSecretsOf(item, now)
      .map((entry) => (entry.retiresAt > end ? { ...entry, retiresAt: end } : entry))
      .filter((entry) => Date.parse(entry.retiresAt) > now.getTime()),
  ];
  const secret = newWebhookSecret();
  try {
    await store.client.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET webhookSecret = :secret, retiringWebhookSecrets = :retiring',
        // Unchanged since the read: two rotations at once must not lose a secret that still signs.
        ConditionExpression: previous === undefined ? 'attribute_exists(pk) AND attribute_not_exists(webhookSecret)' : 'webhookSecret = :previous',
        ExpressionAttributeValues: { ':secret': secret, ':retiring': retiring, ...(previous !== undefined && { ':previous': previous }) },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new KeyChangedError(keyId);
    throw error;
  }
  return { current: secret, retiring };
}

/** What a rotation issued: the new plaintext key (shown once), and when the earlier ones stop. */
export interface Rotation {
  readonly apiKey: string;
  readonly key: ApiKey;
  readonly previousKeysRetireAt: string;
}

/**
 * Issues a new plaintext key for the key `keyId`, and ends the earlier ones `overlapSeconds` from
 * now (0: at once), so clients can be moved to the new one before the old one stops working. The
 * key keeps its id, and with it everything it owns and has used: PDFs, templates, jobs, quota, rate
 * windows, tier and webhook secret. An earlier plaintext key that already had a sooner end keeps it.
 *
 * The new key's alias is written first and grants nothing until the key's item lists it, in one
 * conditional write that fails if the key changed since it was read (then the alias is removed).
 */
export async function rotateApiKey(
  store: KeyStore,
  keyId: string,
  { overlapSeconds, now = new Date() }: { overlapSeconds: number; now?: Date },
): Promise<Rotation | undefined> {
  checkOverlap(overlapSeconds);
  const item = await currentKeyItem(store, keyId);
  if (!item) return undefined;
  if (item.revokedAt) throw new KeyRevokedError(keyId);
  const end = secondsFrom(now, overlapSeconds);
  const credentials: Record<string, Credential> = {};
  for (const [hash, credential] of Object.entries(credentialsOf(item))) {
    // Plaintext keys already retired are forgotten (their aliases expire by TTL).
    if (!acceptsCredential({ [hash]: credential }, hash, now)) continue;
    credentials[hash] = credential.retiresAt !== undefined && credential.retiresAt <= end ? credential : { ...credential, retiresAt: end };
  }
  const apiKey = API_KEY_PREFIX + randomBase62(40);
  const hash = hashApiKey(apiKey);
  credentials[hash] = newCredential(apiKey, now.toISOString());
  const version = typeof item.credentialsVersion === 'number' ? item.credentialsVersion : 0;
  const aliasKey = { pk: `${ENTITY}#${hash}`, sk: ENTITY };
  await store.client.send(
    new PutCommand({
      TableName: store.tableName,
      Item: { ...aliasKey, keyHash: hash, keyId, accountPk: item.pk, createdAt: now.toISOString() },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  try {
    await store.client.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: { pk: item.pk, sk: item.sk },
        UpdateExpression: 'SET credentials = :credentials, credentialsVersion = :next',
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(revokedAt) AND (attribute_not_exists(credentialsVersion) OR credentialsVersion = :version)',
        ExpressionAttributeValues: { ':credentials': credentials, ':next': version + 1, ':version': version },
      }),
    );
  } catch (error) {
    await store.client.send(new DeleteCommand({ TableName: store.tableName, Key: aliasKey }));
    if (isConditionFailure(error)) throw new KeyChangedError(keyId);
    throw error;
  }
  // Aliases of plaintext keys now retiring disappear a day after their end (nothing reads them then:
  // the key's item refuses them). Tidiness only: a failure here leaves an alias that grants nothing.
  const expiry = Math.ceil(Date.parse(end) / 1000) + RETIRED_ALIAS_KEPT_SECONDS;
  await Promise.allSettled(
    Object.keys(credentials)
      .filter((other) => other !== hash && `${ENTITY}#${other}` !== item.pk)
      .map((other) =>
        store.client.send(
          new UpdateCommand({
            TableName: store.tableName,
            Key: { pk: `${ENTITY}#${other}`, sk: ENTITY },
            UpdateExpression: `SET ${TTL_ATTRIBUTE} = :expiry`,
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':expiry': expiry },
          }),
        ),
      ),
  );
  return { apiKey, key: toApiKey(item), previousKeysRetireAt: end };
}

/**
 * Moves a key to another tier, from its next request on: its rate limit, monthly quota (of the
 * current month too: what was used stays used), batch size, concurrency, template limits and the
 * link validity of PDFs made from now on. PDFs already made keep the validity they were given. The
 * key's own overrides are dropped (they were agreed for the old tier) unless given again here.
 * Returns the key as changed, or undefined for an unknown key.
 */
export async function changeTier(
  store: KeyStore,
  keyId: string,
  change: { tier: TierName; rateLimitPerMinute?: number; monthlyQuota?: number },
): Promise<ApiKey | undefined> {
  const item = await keyItemById(store, keyId);
  if (!item) return undefined;
  if (item.revokedAt) throw new KeyRevokedError(keyId);
  const set = ['tier = :tier'];
  const remove: string[] = [];
  const values: Record<string, unknown> = { ':tier': change.tier };
  for (const name of ['rateLimitPerMinute', 'monthlyQuota'] as const) {
    if (change[name] === undefined) remove.push(name);
    else {
      set.push(`${name} = :${name}`);
      values[`:${name}`] = change[name];
    }
  }
  const { Attributes } = await store.client.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: { pk: item.pk, sk: item.sk },
      UpdateExpression: `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`,
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(revokedAt)',
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }),
  );
  return toApiKey(Attributes!);
}

/** A key's plaintext keys as an operator sees them (never a hash or a key): issued, last characters, end. */
export async function credentialsOfKey(store: KeyStore, keyId: string): Promise<Credential[] | undefined> {
  const item = await currentKeyItem(store, keyId);
  if (!item) return undefined;
  return Object.values(credentialsOf(item)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
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
