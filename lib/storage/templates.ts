/**
 * Stored templates (shared/spec/beyond.md "Templates"): a head record per template and one
 * immutable record per version, in the one table; a version's content (html, header and footer,
 * options, data schema, sample data: JSON text, opaque here) inline in its record when small, in
 * the bucket under TEMPLATE_BODY_PREFIX when not.
 *
 *   TEMPLATE#<template id>  / TEMPLATE       the head: owner, name, latest version, the version numbers
 *                                            handed out, times; listed in the entity index under
 *                                            TEMPLATE#<key id> by creation time
 *   TEMPLATE#<template id>  / V#<version>    a version (zero-padded, so versions sort), never changed
 *   TEMPLATES#<key id>      / SLOTS          the key's live templates, for its tier's count limit
 *
 * Nothing is ever half-written for a caller: a version's body is stored before the record that
 * points to it, and a version record before the head that names it as latest. A save that fails
 * removes what it wrote; a crash in between leaves something nobody can reach (an object, a version
 * no head names), never a record pointing at nothing. Deleting marks the head deleted first (no new
 * renders from then on), takes it out of the listing, then removes every version record and every
 * body under the template's prefix, whatever left them there.
 *
 * Saves never wait for each other: each takes its version number with one atomic update of the
 * head's counter, so any number of them at once each get a number of their own (addTemplateVersion).
 *
 * The count limit holds under concurrency: a template takes a slot in its key's SLOTS item (an
 * atomic conditional write, `size(live) < max`) before anything else is written, and gives it back
 * when deleted. A slot whose create died before its head was written is recognised by its age and
 * its missing head, and freed by the next create that finds the key full.
 */
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomBase62 } from '#lib/random.ts';
import { listNewestFirst, type OwnerListCursor } from './owner-listing.ts';
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
  let bodyKey: string | undefined;
  try {
    bodyKey = await putBodyIfLarge(store, input.keyId, input.id, input.body);
    await putVersionRecord(store, storedVersion(input, 1, createdAt, bodyKey));
    const head: TemplateHead = { id: input.id, keyId: input.keyId, name: input.name, latestVersion: 1, createdAt, updatedAt: createdAt };
    await store.dynamo.send(
      new PutCommand({
        TableName: store.tableName,
        Item: { ...headKey(head.id), [ENTITY_INDEX.partitionKey]: ownerPartition(head.keyId), [ENTITY_INDEX.sortKey]: `${createdAt}#${head.id}`, ...head, [VERSIONS_TAKEN]: 1 },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return { head, version: { templateId: input.id, keyId: input.keyId, version: 1, name: input.name, createdAt, body: input.body } };
  } catch (error) {
    // Not created, unless the head's write went through and only its answer was lost (a retried
    // put then finds its own head): then the template is whole and stays.
    if (!(await getTemplateHead(store, input.id).catch(() => undefined))) {
      await removeVersion(store, input.id, 1, bodyKey).catch(() => undefined);
      // The slot goes back at once (a crash leaves it to the repair in takeSlot).
      await freeSlot(store, input.keyId, input.id).catch(() => undefined);
    }
    throw error;
  }
}

/**
 * Saves a new version of a template and makes it the latest, then drops the versions that fall
 * out of the `versionsKept` newest. Answers the head and the version saved; undefined when the
 * template does not exist, is another key's, or was deleted meanwhile.
 *
 * However many saves race, each gets a number of its own in one atomic write (an update of the
 * head's counter, conditional on the template being the caller's and not deleted), so none waits
 * for another or gives up: the numbers follow one another, with a gap only where a save failed
 * after taking its number. The head names the highest version whose record is written, so it
 * never names one that is not there. A save that fails removes what it wrote.
 */
export async function addTemplateVersion(
  store: TemplateStore,
  input: { id: string; keyId: string; name: string; body: string; now: Date; versionsKept: number },
): Promise<{ head: TemplateHead; version: TemplateVersion } | undefined> {
  // Stored before the number is taken, under a name of its own: written before the record that
  // points to it, and there before a delete that begins after the number was taken lists the prefix.
  const bodyKey = await putBodyIfLarge(store, input.keyId, input.id, input.body);
  let version: number | undefined;
  // How far the save got: what a failure must undo.
  let reached: 'body' | 'record' | 'head' = 'body';
  try {
    version = await takeVersionNumber(store, input.id, input.keyId);
    if (version === undefined) {
      await removeBody(store, bodyKey);
      return undefined;
    }
    const stored = storedVersion(input, version, input.now.toISOString(), bodyKey);
    reached = 'record';
    await putVersionRecord(store, stored);
    reached = 'head';
    const head = await advanceHead(store, input.id, stored);
    if (!head) {
      // Deleted since the number was taken: the delete may have looked for versions before this one
      // was written, so this save removes its own.
      await removeVersion(store, input.id, version, bodyKey);
      return undefined;
    }
    await dropVersionsBefore(store, input.id, version - input.versionsKept + 1).catch(() => undefined);
    return { head, version: { templateId: input.id, keyId: input.keyId, version, name: input.name, createdAt: stored.createdAt, body: input.body } };
  } catch (error) {
    // Not saved: what it wrote goes. A record that may have been written goes before its body (a
    // later save's head may come to name its number, and must not find it pointing at nothing).
    // Once the head may be naming it (an error there leaves that unknown), the version is whole
    // and stays; deleting the template removes it.
    if (reached === 'body') await removeBody(store, bodyKey).catch(() => undefined);
    if (reached === 'record') await removeVersion(store, input.id, version!, bodyKey).catch(() => undefined);
    throw error;
  }
}

/** The head's counter of version numbers handed out (the latest version is the highest one written). */
const VERSIONS_TAKEN = 'versionsTaken';

/**
 * Takes the template's next version number: one conditional update, atomic however many saves
 * race. Undefined when the template does not exist, is not `keyId`'s, or was deleted.
 */
async function takeVersionNumber(store: TemplateStore, templateId: string, keyId: string): Promise<number | undefined> {
  try {
    const { Attributes } = await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: headKey(templateId),
        // A head written before the counter existed starts it from its latest version.
        UpdateExpression: 'SET #taken = if_not_exists(#taken, latestVersion) + :one',
        ConditionExpression: 'attribute_exists(pk) AND keyId = :keyId AND attribute_not_exists(deletedAt)',
        ExpressionAttributeNames: { '#taken': VERSIONS_TAKEN },
        ExpressionAttributeValues: { ':one': 1, ':keyId': keyId },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Attributes?.[VERSIONS_TAKEN] as number;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/**
 * Names `version` as the head's latest, unless a higher one is named already (saves finish in any
 * order) or the template was deleted. Answers the head as it is then, undefined when deleted.
 */
async function advanceHead(store: TemplateStore, templateId: string, version: StoredVersion): Promise<TemplateHead | undefined> {
  try {
    const { Attributes } = await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: headKey(templateId),
        UpdateExpression: 'SET latestVersion = :version, #name = :name, updatedAt = :at',
        ConditionExpression: 'latestVersion < :version AND attribute_not_exists(deletedAt)',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: { ':version': version.version, ':name': version.name, ':at': version.createdAt },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return asHead(Attributes!);
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    // A later version is the latest already (this one stays readable by number), or it was deleted.
    return getTemplateHead(store, templateId);
  }
}

function storedVersion(input: { id: string; keyId: string; name: string; body: string }, version: number, createdAt: string, bodyKey: string | undefined): StoredVersion {
  return {
    templateId: input.id,
    keyId: input.keyId,
    version,
    name: input.name,
    createdAt,
    size: Buffer.byteLength(input.body, 'utf8'),
    ...(bodyKey ? { bodyKey } : { body: input.body }),
  };
}

async function putVersionRecord(store: TemplateStore, stored: StoredVersion): Promise<void> {
  await store.dynamo.send(
    new PutCommand({ TableName: store.tableName, Item: { ...versionKey(stored.templateId, stored.version), ...stored }, ConditionExpression: 'attribute_not_exists(pk)' }),
  );
}

async function putBodyIfLarge(store: TemplateStore, keyId: string, templateId: string, body: string): Promise<string | undefined> {
  if (Buffer.byteLength(body, 'utf8') <= MAX_INLINE_BODY_BYTES) return undefined;
  const bodyKey = `${bodyPrefix(keyId, templateId)}${randomBase62(16)}.json`;
  await store.s3.send(new PutObjectCommand({ Bucket: store.bucketName, Key: bodyKey, Body: body, ContentType: 'application/json' }));
  return bodyKey;
}

/** Where one template's large bodies are kept, every one of them (what a delete empties). */
const bodyPrefix = (keyId: string, templateId: string) => `${TEMPLATE_BODY_PREFIX}${keyId}/${templateId}/`;

async function removeBody(store: TemplateStore, bodyKey: string | undefined): Promise<void> {
  if (bodyKey) await store.s3.send(new DeleteObjectCommand({ Bucket: store.bucketName, Key: bodyKey }));
}

/** A version's record, then its body (never a record left pointing at a body that is gone). */
async function removeVersion(store: TemplateStore, templateId: string, version: number, bodyKey: string | undefined): Promise<void> {
  await store.dynamo.send(new DeleteCommand({ TableName: store.tableName, Key: versionKey(templateId, version) }));
  await removeBody(store, bodyKey);
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

/** A version record's key and where its body is, when in the bucket: what removing it takes. */
type VersionRef = { readonly sk: string; readonly bodyKey?: string };

/**
 * The template's version records, from the first up to and including `upTo` (all when absent), a
 * page at a time. Only their keys and body keys are read back (a read still costs their size).
 */
async function* versionRecords(store: TemplateStore, templateId: string, upTo?: number): AsyncGenerator<VersionRef[]> {
  const { pk } = versionKey(templateId, 0);
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await store.dynamo.send(
      new QueryCommand({
        TableName: store.tableName,
        KeyConditionExpression: upTo === undefined ? 'pk = :pk AND begins_with(sk, :versions)' : 'pk = :pk AND sk BETWEEN :first AND :last',
        ProjectionExpression: 'sk, bodyKey',
        ExpressionAttributeValues:
          upTo === undefined ? { ':pk': pk, ':versions': 'V#' } : { ':pk': pk, ':first': versionKey(templateId, 0).sk, ':last': versionKey(templateId, upTo).sk },
        ExclusiveStartKey: startKey,
      }),
    );
    yield (page.Items ?? []) as VersionRef[];
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/** Removes versions and their bodies, some at a time: the table and the bucket take them in parallel. */
async function removeVersions(store: TemplateStore, templateId: string, versions: readonly VersionRef[]): Promise<void> {
  for (let i = 0; i < versions.length; i += 25) {
    await Promise.all(
      versions.slice(i, i + 25).map(async ({ sk, bodyKey }) => {
        await store.dynamo.send(new DeleteCommand({ TableName: store.tableName, Key: { pk: versionKey(templateId, 0).pk, sk } }));
        await removeBody(store, bodyKey);
      }),
    );
  }
}

/**
 * Removes every version numbered below `first` (and its body). Every one, not just the one that fell
 * out last: saves finish in any order, a save that died never removed its own oldest, and a key
 * whose tier keeps fewer versions than before has more than one to drop.
 */
async function dropVersionsBefore(store: TemplateStore, templateId: string, first: number): Promise<void> {
  if (first <= 1) return;
  for await (const page of versionRecords(store, templateId, first - 1)) await removeVersions(store, templateId, page);
}

/**
 * Deletes a template: its head is marked deleted and leaves the listing at once (no render finds it
 * from then on), its slot is given back, then every version record it has and every body under its
 * prefix of the bucket are removed (what is left of saves that died included). A save still under
 * way when the head is marked removes its own (addTemplateVersion). PDFs made from it are not touched.
 */
export async function deleteTemplate(store: TemplateStore, head: TemplateHead, { now }: { now: Date }): Promise<void> {
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
  for await (const page of versionRecords(store, head.id)) await removeVersions(store, head.id, page);
  // Bodies no record points to: of saves that died between writing the body and the record.
  let continuationToken: string | undefined;
  do {
    const page = await store.s3.send(new ListObjectsV2Command({ Bucket: store.bucketName, Prefix: bodyPrefix(head.keyId, head.id), ContinuationToken: continuationToken }));
    const keys = (page.Contents ?? []).flatMap(({ Key }) => (Key ? [Key] : []));
    for (let i = 0; i < keys.length; i += 25) await Promise.all(keys.slice(i, i + 25).map((key) => removeBody(store, key)));
    continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (continuationToken);
}

/** The owner's templates, newest first, `limit` at most per page. */
export async function listTemplates(
  store: TemplateStore,
  keyId: string,
  page: { limit: number; after?: OwnerListCursor },
): Promise<{ heads: TemplateHead[]; next?: OwnerListCursor }> {
  const { items: heads, next } = await listNewestFirst(store, { partition: ownerPartition(keyId), itemKey: headKey, read: asHead }, page);
  return { heads, ...(next && { next }) };
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
