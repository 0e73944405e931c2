/**
 * Stored templates (shared/spec/beyond.md "Templates"): a head record per template and one
 * immutable record per version, in the one table; a version's content (html, header and footer,
 * options, data schema, sample data: JSON text, opaque here) inline in its record when small, in
 * the bucket under TEMPLATE_BODY_PREFIX when not.
 *
 *   TEMPLATE#<template id>  / TEMPLATE       the head: owner, name, latest version, times; listed in
 *                                            the entity index under TEMPLATE#<key id> by creation time
 *   TEMPLATE#<template id>  / V#<version>    a version (zero-padded, so versions sort), never changed
 *   TEMPLATES#<key id>      / SLOTS          the key's live templates, for its tier's count limit
 *
 * Nothing is ever half-written for a caller: a version's body is stored before the record that
 * points to it, and a version record before the head that names it as latest. A crash in between
 * leaves something nobody can reach (an object, a version no head names), never a record pointing
 * at nothing. Deleting marks the head deleted first (no new renders from then on), takes it out of
 * the listing, then removes its versions and bodies.
 *
 * The count limit holds under concurrency: a template takes a slot in its key's SLOTS item (an
 * atomic conditional write, `size(live) < max`) before anything else is written, and gives it back
 * when deleted. A slot whose create died before its head was written is recognised by its age and
 * its missing head, and freed by the next create that finds the key full.
 */
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomBase62 } from '#lib/random.ts';
import { ENTITY_INDEX } from './table.ts';

export interface TemplateStore {
  readonly dynamo: DynamoDBDocumentClient;
  readonly s3: S3Client;
  readonly tableName: string;
  readonly bucketName: string;
}

/** Where version bodies too large for their record are kept: `templates/<key id>/<template id>/<random>.json`. */
export const TEMPLATE_BODY_PREFIX = 'templates/';
/**
 * A version whose content is larger than this, as JSON text, goes to the bucket. A DynamoDB item
 * holds 400 KB, names and all; a 64 KB record keeps every render's read of a template cheap (a
 * consistent read costs 4 KB per unit) and leaves the record's own fields ample room.
 */
export const MAX_INLINE_BODY_BYTES = 64 * 1024;
/** A slot older than this whose template has no head is a create that died: function timeouts are seconds. */
const ABANDONED_SLOT_MS = 5 * 60_000;
/** A deleted template's head stays this long (a tombstone: its id is never reused), then expires. */
const DELETED_HEAD_DAYS = 30;
/** Rounds of "take the next version number, or help the one who took it finish" before giving up. */
const MAX_VERSION_ROUNDS = 8;

/** The partition key prefix of every template's head and versions: what a renderer may read of the table (cdk/stack.ts). */
export const TEMPLATE_KEY_PREFIX = 'TEMPLATE#';
const HEAD = 'TEMPLATE';
const headKey = (id: string) => ({ pk: `${TEMPLATE_KEY_PREFIX}${id}`, sk: HEAD });
const versionKey = (id: string, version: number) => ({ pk: `${TEMPLATE_KEY_PREFIX}${id}`, sk: `V#${String(version).padStart(10, '0')}` });
const slotsKey = (keyId: string) => ({ pk: `TEMPLATES#${keyId}`, sk: 'SLOTS' });
/** The owner's templates in the entity index, by creation time. */
const ownerPartition = (keyId: string) => `TEMPLATE#${keyId}`;

/** A template as a whole: whose, what it is called now, and its latest version. */
export interface TemplateHead {
  readonly id: string;
  readonly keyId: string;
  /** The latest version's name. */
  readonly name: string;
  readonly latestVersion: number;
  readonly createdAt: string;
  /** When the latest version was saved. */
  readonly updatedAt: string;
}

/** One version, as saved: never changed afterwards. */
export interface TemplateVersion {
  readonly templateId: string;
  readonly keyId: string;
  readonly version: number;
  readonly name: string;
  readonly createdAt: string;
  /** The content, as JSON text (what lib/documents/templates.ts saved). */
  readonly body: string;
}

interface StoredVersion extends Omit<TemplateVersion, 'body'> {
  readonly body?: string;
  readonly bodyKey?: string;
  readonly size: number;
}

/** 24 base62 characters: about 143 random bits, neither guessable nor sequential. */
export function newTemplateId(): string {
  return 'tpl_' + randomBase62(24);
}

/** Why a template could not be created: its key has as many as its tier allows. */
export interface TemplateLimitReached {
  readonly limitReached: true;
  readonly live: number;
}

/**
 * Creates a template with its first version: a slot of the key's count limit, the body, the
 * version, then the head. Answers the head and version 1, or that the key has `maxTemplates` already.
 */
export async function createTemplate(
  store: TemplateStore,
  input: { id: string; keyId: string; name: string; body: string; now: Date; maxTemplates: number },
): Promise<{ head: TemplateHead; version: TemplateVersion } | TemplateLimitReached> {
  const taken = await takeSlot(store, input.keyId, input.id, input.maxTemplates, input.now);
  if (taken !== true) return taken;
  const createdAt = input.now.toISOString();
  const version: TemplateVersion = { templateId: input.id, keyId: input.keyId, version: 1, name: input.name, createdAt, body: input.body };
  try {
    await putVersion(store, version);
    const head: TemplateHead = { id: input.id, keyId: input.keyId, name: input.name, latestVersion: 1, createdAt, updatedAt: createdAt };
    await store.dynamo.send(
      new PutCommand({
        TableName: store.tableName,
        Item: { ...headKey(head.id), [ENTITY_INDEX.partitionKey]: ownerPartition(head.keyId), [ENTITY_INDEX.sortKey]: `${createdAt}#${head.id}`, ...head },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return { head, version };
  } catch (error) {
    // Not created: the slot goes back at once (a crash leaves it to the repair in takeSlot).
    await freeSlot(store, input.keyId, input.id).catch(() => undefined);
    throw error;
  }
}

/**
 * Saves a new version of a template and makes it the latest, then drops the version that falls
 * out of the `versionsKept` newest. Answers the head and the version saved; undefined when the
 * template does not exist (or was deleted meanwhile). Two saves at once each get a version of
 * their own, one after the other.
 */
export async function addTemplateVersion(
  store: TemplateStore,
  input: { id: string; keyId: string; name: string; body: string; now: Date; versionsKept: number },
): Promise<{ head: TemplateHead; version: TemplateVersion } | undefined> {
  // Stored once, under a name of its own: whichever version number this save ends up with.
  const bodyKey = await putBodyIfLarge(store, input.keyId, input.id, input.body);
  for (let round = 0; round < MAX_VERSION_ROUNDS; round++) {
    const head = await getTemplateHead(store, input.id);
    if (!head || head.keyId !== input.keyId) return undefined;
    const version = head.latestVersion + 1;
    const stored: StoredVersion = {
      templateId: input.id,
      keyId: input.keyId,
      version,
      name: input.name,
      createdAt: input.now.toISOString(),
      size: Buffer.byteLength(input.body, 'utf8'),
      ...(bodyKey ? { bodyKey } : { body: input.body }),
    };
    try {
      await store.dynamo.send(
        new PutCommand({ TableName: store.tableName, Item: { ...versionKey(input.id, version), ...stored }, ConditionExpression: 'attribute_not_exists(pk)' }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      // Another save took this number (or died having taken it): its version is whole, so the head
      // may name it; help it there, then take the next number.
      const taken = await readStoredVersion(store, input.id, version);
      if (taken) await advanceHead(store, head, taken);
      continue;
    }
    const advanced = await advanceHead(store, head, stored);
    if (!advanced) return undefined; // deleted meanwhile: the version is left where nobody reaches it
    await dropVersion(store, input.id, version - input.versionsKept).catch(() => undefined);
    const { bodyKey: _bodyKey, body: _body, size: _size, ...fields } = stored;
    return { head: advanced, version: { ...fields, body: input.body } };
  }
  throw new Error(`template ${input.id}: no version number could be taken in ${MAX_VERSION_ROUNDS} rounds`);
}

/**
 * Names `version` as the head's latest, if the head still names the one before it and is not
 * deleted. Answers the head as it is then (already there counts), undefined when deleted.
 */
async function advanceHead(store: TemplateStore, head: TemplateHead, version: StoredVersion): Promise<TemplateHead | undefined> {
  if (version.version !== head.latestVersion + 1) return head;
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: headKey(head.id),
        UpdateExpression: 'SET latestVersion = :version, #name = :name, updatedAt = :at',
        ConditionExpression: 'latestVersion = :previous AND attribute_not_exists(deletedAt)',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: { ':version': version.version, ':name': version.name, ':at': version.createdAt, ':previous': head.latestVersion },
      }),
    );
    return { ...head, latestVersion: version.version, name: version.name, updatedAt: version.createdAt };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const now = await getTemplateHead(store, head.id);
    return now && now.latestVersion >= version.version ? now : undefined;
  }
}

async function putBodyIfLarge(store: TemplateStore, keyId: string, templateId: string, body: string): Promise<string | undefined> {
  if (Buffer.byteLength(body, 'utf8') <= MAX_INLINE_BODY_BYTES) return undefined;
  const bodyKey = `${TEMPLATE_BODY_PREFIX}${keyId}/${templateId}/${randomBase62(16)}.json`;
  await store.s3.send(new PutObjectCommand({ Bucket: store.bucketName, Key: bodyKey, Body: body, ContentType: 'application/json' }));
  return bodyKey;
}

async function putVersion(store: TemplateStore, version: TemplateVersion): Promise<void> {
  const bodyKey = await putBodyIfLarge(store, version.keyId, version.templateId, version.body);
  const { body, ...fields } = version;
  const stored: StoredVersion = { ...fields, size: Buffer.byteLength(body, 'utf8'), ...(bodyKey ? { bodyKey } : { body }) };
  await store.dynamo.send(
    new PutCommand({ TableName: store.tableName, Item: { ...versionKey(version.templateId, version.version), ...stored }, ConditionExpression: 'attribute_not_exists(pk)' }),
  );
}

async function readStoredVersion(store: TemplateStore, templateId: string, version: number): Promise<StoredVersion | undefined> {
  const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: versionKey(templateId, version), ConsistentRead: true }));
  if (!Item) return undefined;
  const { pk: _pk, sk: _sk, ...stored } = Item;
  return stored as StoredVersion;
}

/** The template's head, unless it does not exist or was deleted. Whose it is, the caller checks. */
export async function getTemplateHead(store: TemplateStore, id: string): Promise<TemplateHead | undefined> {
  const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: headKey(id), ConsistentRead: true }));
  if (!Item || Item.deletedAt !== undefined) return undefined;
  return asHead(Item);
}

function asHead(item: Record<string, unknown>): TemplateHead {
  const { id, keyId, name, latestVersion, createdAt, updatedAt } = item as unknown as TemplateHead;
  return { id, keyId, name, latestVersion, createdAt, updatedAt };
}

/** One version with its content (read from the bucket when it is kept there); undefined when there is none. */
export async function getTemplateVersion(store: TemplateStore, templateId: string, version: number): Promise<TemplateVersion | undefined> {
  const stored = await readStoredVersion(store, templateId, version);
  if (!stored) return undefined;
  const { bodyKey, body, size: _size, ...fields } = stored;
  if (body !== undefined) return { ...fields, body };
  const { Body } = await store.s3.send(new GetObjectCommand({ Bucket: store.bucketName, Key: bodyKey }));
  if (!Body) throw new Error(`the body of ${templateId} version ${version} is empty`);
  return { ...fields, body: await Body.transformToString('utf8') };
}

/** Removes a version that fell out of the kept ones (and its body); nothing when there is none. */
async function dropVersion(store: TemplateStore, templateId: string, version: number): Promise<void> {
  if (version < 1) return;
  const { Attributes } = await store.dynamo.send(new DeleteCommand({ TableName: store.tableName, Key: versionKey(templateId, version), ReturnValues: 'ALL_OLD' }));
  const bodyKey = (Attributes as StoredVersion | undefined)?.bodyKey;
  if (bodyKey) await store.s3.send(new DeleteObjectCommand({ Bucket: store.bucketName, Key: bodyKey }));
}

/**
 * Deletes a template: its head is marked deleted and leaves the listing at once (no render finds it
 * from then on), its slot is given back, and its versions (the `versionsKept` newest, all there
 * are) and their bodies are removed. PDFs made from it are not touched.
 */
export async function deleteTemplate(store: TemplateStore, head: TemplateHead, { now, versionsKept }: { now: Date; versionsKept: number }): Promise<void> {
  await store.dynamo.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: headKey(head.id),
      UpdateExpression: 'SET deletedAt = :now, #ttl = :ttl REMOVE #p, #s',
      ExpressionAttributeNames: { '#ttl': 'ttl', '#p': ENTITY_INDEX.partitionKey, '#s': ENTITY_INDEX.sortKey },
      ExpressionAttributeValues: { ':now': now.toISOString(), ':ttl': Math.ceil(now.getTime() / 1000) + DELETED_HEAD_DAYS * 86_400 },
    }),
  );
  await freeSlot(store, head.keyId, head.id);
  const versions: number[] = [];
  for (let version = head.latestVersion; version >= 1 && version > head.latestVersion - versionsKept; version--) versions.push(version);
  // A few at a time: a template may have hundreds of versions, and the table takes them in parallel.
  for (let i = 0; i < versions.length; i += 25) await Promise.all(versions.slice(i, i + 25).map((version) => dropVersion(store, head.id, version)));
}

/** Where a listing continues: the last template of the previous page. */
export interface TemplateListCursor {
  readonly createdAt: string;
  readonly id: string;
}

/** The owner's templates, newest first, `limit` at most per page. */
export async function listTemplates(
  store: TemplateStore,
  keyId: string,
  page: { limit: number; after?: TemplateListCursor },
): Promise<{ heads: TemplateHead[]; next?: TemplateListCursor }> {
  const result = await store.dynamo.send(
    new QueryCommand({
      TableName: store.tableName,
      IndexName: ENTITY_INDEX.name,
      KeyConditionExpression: '#p = :owner',
      ExpressionAttributeNames: { '#p': ENTITY_INDEX.partitionKey },
      ExpressionAttributeValues: { ':owner': ownerPartition(keyId) },
      ScanIndexForward: false,
      Limit: page.limit,
      ...(page.after && {
        ExclusiveStartKey: {
          ...headKey(page.after.id),
          [ENTITY_INDEX.partitionKey]: ownerPartition(keyId),
          [ENTITY_INDEX.sortKey]: `${page.after.createdAt}#${page.after.id}`,
        },
      }),
    }),
  );
  const heads = (result.Items ?? []).map(asHead);
  const last = heads.at(-1);
  return { heads, ...(result.LastEvaluatedKey && last && { next: { createdAt: last.createdAt, id: last.id } }) };
}

/**
 * Takes one of the key's `max` template slots for `templateId`: true, or the limit reached. When
 * the key looks full, slots of creates that died (old, and no head was ever written, or their
 * template was deleted and the slot not given back) are freed first.
 */
async function takeSlot(store: TemplateStore, keyId: string, templateId: string, max: number, now: Date): Promise<true | TemplateLimitReached> {
  for (let round = 0; round < 4; round++) {
    try {
      await store.dynamo.send(
        new UpdateCommand({
          TableName: store.tableName,
          Key: slotsKey(keyId),
          UpdateExpression: 'SET #live.#id = :at',
          // False too when the key has no item yet: it is made below.
          ConditionExpression: 'size(#live) < :max',
          ExpressionAttributeNames: { '#live': 'live', '#id': templateId },
          ExpressionAttributeValues: { ':at': now.getTime(), ':max': max },
        }),
      );
      return true;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
    const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: slotsKey(keyId), ConsistentRead: true }));
    if (!Item) {
      if (max < 1) return { limitReached: true, live: 0 };
      try {
        await store.dynamo.send(
          new PutCommand({ TableName: store.tableName, Item: { ...slotsKey(keyId), live: { [templateId]: now.getTime() } }, ConditionExpression: 'attribute_not_exists(pk)' }),
        );
        return true;
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        continue;
      }
    }
    const live = (Item.live ?? {}) as Record<string, number>;
    let freed = 0;
    for (const [id, at] of Object.entries(live)) {
      if (now.getTime() - at < ABANDONED_SLOT_MS) continue;
      const head = await getTemplateHead(store, id);
      if (head) continue;
      if (await freeSlot(store, keyId, id, at)) freed++;
    }
    if (freed === 0) return { limitReached: true, live: Object.keys(live).length };
  }
  return { limitReached: true, live: max };
}

/** Gives a slot back (only if it still holds `at`, when given): false if it was gone already. */
async function freeSlot(store: TemplateStore, keyId: string, templateId: string, at?: number): Promise<boolean> {
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: slotsKey(keyId),
        UpdateExpression: 'REMOVE #live.#id',
        ConditionExpression: at === undefined ? 'attribute_exists(#live.#id)' : '#live.#id = :at',
        ExpressionAttributeNames: { '#live': 'live', '#id': templateId },
        ...(at !== undefined && { ExpressionAttributeValues: { ':at': at } }),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
