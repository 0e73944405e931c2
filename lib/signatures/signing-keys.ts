/**
 * Signing keys (shared/spec/beyond.md "Signatures"): a KMS asymmetric key per signing key, created
 * for one API key and usable by it alone, and its record in the one table:
 *
 *   SIGNINGKEY#<signing key id> / SIGNINGKEY   the record: owner, KMS key ARN, key spec, subject,
 *                                              CSR, status, certificate chain and its validity;
 *                                              listed in the entity index under SIGNINGKEY#<key id>
 *   SIGNINGKEYS#<key id>        / COUNT        the key's live signing keys, for its tier's limit
 *   (a deleted key's record leaves its owner's listing for SIGNINGKEY_DELETING in the entity index,
 *   by deletion time, until its KMS key's deletion is scheduled: see retryKeyDeletions)
 *
 * The private key never leaves KMS: we hold the key's ARN, its public key's certificate chain, and
 * call Sign with a digest. Another API key's signing key is indistinguishable from a missing one.
 * Deleting marks the record deleted (nothing signs with it from then on), then schedules the KMS
 * key's deletion (KMS's minimum wait, 7 days, in which it can still be cancelled by an operator).
 * A scheduling that fails (KMS unavailable, the function stopped) is done again by the scheduled
 * reconcile (retryKeyDeletions): a deleted key is billed a few minutes more, never for good.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { CreateKeyCommand, GetPublicKeyCommand, ScheduleKeyDeletionCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { randomBase62 } from '#lib/random.ts';
import { listNewestFirst, type OwnerListCursor } from '#lib/storage/owner-listing.ts';
import { ENTITY_INDEX } from '#lib/storage/table.ts';
import { SIGNING_KEY_ID_PATTERN } from './ids.ts';
import { certificateRequest, checkChain, fromPem, selfSignedCertificate, toPem, type KeySpec, type SignDigest, type Subject } from './certificates.ts';

export interface SigningKeyStore {
  readonly dynamo: DynamoDBDocumentClient;
  readonly kms: KMSClient;
  readonly tableName: string;
  /** The `pdf-api:stack` tag's value on the KMS keys this deployment creates (the CDK policy's condition). */
  readonly stackTag: string;
}

export type SigningKeyStatus = 'pending_certificate' | 'active';

export interface SigningKey {
  readonly id: string;
  readonly keyId: string;
  readonly kmsKeyArn: string;
  readonly keySpec: KeySpec;
  readonly subject: Subject;
  readonly csrPem: string;
  readonly status: SigningKeyStatus;
  /** PEM, leaf first, once uploaded (or made, `self_signed`). */
  readonly certificateChainPem?: string;
  readonly notAfter?: string;
  readonly createdAt: string;
  readonly deletedAt?: string;
  /** When its KMS key's deletion was scheduled (by the DELETE, or by the reconcile after it failed). */
  readonly kmsDeletionScheduledAt?: string;
}

export const STACK_TAG = 'pdf-api:stack';
/** KMS's shortest wait before a scheduled deletion (7 days): a key deleted by mistake can still be saved by an operator. */
export const KMS_DELETION_WINDOW_DAYS = 7;
/** How long a `self_signed` certificate is valid. */
export const SELF_SIGNED_DAYS = 365;

/** The partition key prefix of signing keys' records: all a renderer may read of them (cdk/stack.ts). */
export const SIGNING_KEY_PREFIX = 'SIGNINGKEY#';
const recordKey = (id: string) => ({ pk: `${SIGNING_KEY_PREFIX}${id}`, sk: 'SIGNINGKEY' });
const countKey = (keyId: string) => ({ pk: `SIGNINGKEYS#${keyId}`, sk: 'COUNT' });
const ownerPartition = (keyId: string) => `SIGNINGKEY#${keyId}`;
/** The entity index's partition of deleted keys whose KMS key's deletion is not yet known to be scheduled. */
const DELETING_PARTITION = 'SIGNINGKEY_DELETING';
/** Deleted keys whose KMS deletion one reconcile run schedules at most (the rest wait for the next run, 5 minutes on). */
export const KEY_DELETIONS_PER_RUN = 25;

/** 24 base62 characters: about 143 random bits, neither guessable nor sequential. */
export function newSigningKeyId(): string {
  return 'sk_' + randomBase62(24);
}

const SIGNING_ALGORITHM = { ECC_NIST_P256: 'ECDSA_SHA_256', RSA_3072: 'RSASSA_PKCS1_V1_5_SHA_256' } as const;

/** Signs digests with the KMS key: KMS Sign, MessageType DIGEST. The SDK retries throttling itself. */
export function kmsSigner(kms: KMSClient, key: Pick<SigningKey, 'kmsKeyArn' | 'keySpec'>): SignDigest {
  return async (digest) => {
    const { Signature } = await kms.send(new SignCommand({ KeyId: key.kmsKeyArn, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: SIGNING_ALGORITHM[key.keySpec] }));
    if (!Signature) throw new Error('KMS Sign answered without a signature');
    return Signature;
  };
}

async function publicKeyOf(kms: KMSClient, kmsKeyArn: string): Promise<Uint8Array> {
  const { PublicKey } = await kms.send(new GetPublicKeyCommand({ KeyId: kmsKeyArn }));
  if (!PublicKey) throw new Error('KMS GetPublicKey answered without a public key');
  return PublicKey;
}

export interface SigningKeyLimitReached {
  readonly limitReached: true;
}

/**
 * A new signing key: a slot of the key's limit, a KMS key tagged with the stack and the owner, its
 * CSR for `subject` (and a certificate by itself, `selfSigned`), then the record. A failure after
 * the slot gives it back and schedules the KMS key's deletion, so nothing half-made stays billed.
 */
export async function createSigningKey(
  store: SigningKeyStore,
  input: { keyId: string; keySpec: KeySpec; subject: Subject; selfSigned: boolean; now: Date; maxSigningKeys: number },
): Promise<SigningKey | SigningKeyLimitReached> {
  if (!(await takeSlot(store, input.keyId, input.maxSigningKeys))) return { limitReached: true };
  const id = newSigningKeyId();
  let kmsKeyArn: string | undefined;
  try {
    const created = await store.kms.send(
      new CreateKeyCommand({
        KeySpec: input.keySpec,
        KeyUsage: 'SIGN_VERIFY',
        Description: `pdf-api signing key ${id}`,
        Tags: [
          { TagKey: STACK_TAG, TagValue: store.stackTag },
          { TagKey: 'pdf-api:signing-key-id', TagValue: id },
        ],
      }),
    );
    kmsKeyArn = created.KeyMetadata?.Arn;
    if (!kmsKeyArn) throw new Error('KMS CreateKey answered without a key ARN');
    const publicKey = await publicKeyOf(store.kms, kmsKeyArn);
    const sign = kmsSigner(store.kms, { kmsKeyArn, keySpec: input.keySpec });
    const csrPem = await certificateRequest({ subject: input.subject, publicKey, keySpec: input.keySpec, sign });
    let certificate: { certificateChainPem: string; notAfter: string } | undefined;
    if (input.selfSigned) {
      const pem = await selfSignedCertificate({ subject: input.subject, publicKey, keySpec: input.keySpec, sign, now: input.now, days: SELF_SIGNED_DAYS });
      const checked = await checkChain(pem, publicKey, input.now);
      certificate = { certificateChainPem: pem, notAfter: checked.notAfter.toISOString() };
    }
    const key: SigningKey = {
      id,
      keyId: input.keyId,
      kmsKeyArn,
      keySpec: input.keySpec,
      subject: input.subject,
      csrPem,
      status: certificate ? 'active' : 'pending_certificate',
      ...certificate,
      createdAt: input.now.toISOString(),
    };
    await store.dynamo.send(
      new PutCommand({
        TableName: store.tableName,
        Item: { ...recordKey(id), [ENTITY_INDEX.partitionKey]: ownerPartition(input.keyId), [ENTITY_INDEX.sortKey]: `${key.createdAt}#${id}`, ...key },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return key;
  } catch (error) {
    await releaseSlot(store, input.keyId).catch(() => undefined);
    if (kmsKeyArn) await store.kms.send(new ScheduleKeyDeletionCommand({ KeyId: kmsKeyArn, PendingWindowInDays: KMS_DELETION_WINDOW_DAYS })).catch(() => undefined);
    throw error;
  }
}

/** The caller's signing key, or undefined when it does not exist, is another key's, or was deleted. */
export async function getSigningKey(store: Pick<SigningKeyStore, 'dynamo' | 'tableName'>, keyId: string, id: string): Promise<SigningKey | undefined> {
  if (!SIGNING_KEY_ID_PATTERN.test(id)) return undefined;
  const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: recordKey(id), ConsistentRead: true }));
  if (!Item || Item.keyId !== keyId || Item.deletedAt) return undefined;
  return asSigningKey(Item);
}

function asSigningKey(item: Record<string, unknown>): SigningKey {
  const { pk: _pk, sk: _sk, [ENTITY_INDEX.partitionKey]: _gp, [ENTITY_INDEX.sortKey]: _gs, ...key } = item;
  return key as unknown as SigningKey;
}

/** The caller's signing keys, newest first, a page at a time. */
export async function listSigningKeys(
  store: Pick<SigningKeyStore, 'dynamo' | 'tableName'>,
  keyId: string,
  page: { limit: number; after?: OwnerListCursor },
): Promise<{ keys: SigningKey[]; next?: OwnerListCursor }> {
  const { items: keys, next } = await listNewestFirst(store, { partition: ownerPartition(keyId), itemKey: recordKey, read: asSigningKey }, page);
  return { keys, ...(next && { next }) };
}

/**
 * Stores the chain a caller uploads for a key, once it checks (lib/signatures/certificates.ts
 * checkChain, which throws ChainProblem saying what is wrong): the key becomes `active`.
 */
export async function uploadCertificate(store: SigningKeyStore, key: SigningKey, chainPem: string, now: Date): Promise<SigningKey | undefined> {
  const checked = await checkChain(chainPem, await publicKeyOf(store.kms, key.kmsKeyArn), now);
  const certificateChainPem = checked.chain.map((der) => toPem('CERTIFICATE', der)).join('');
  try {
    const { Attributes } = await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: recordKey(key.id),
        UpdateExpression: 'SET #status = :active, certificateChainPem = :chain, notAfter = :notAfter',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deletedAt) AND keyId = :owner',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':active': 'active', ':chain': certificateChainPem, ':notAfter': checked.notAfter.toISOString(), ':owner': key.keyId },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return asSigningKey(Attributes!);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined; // deleted meanwhile
    throw error;
  }
}

/**
 * Deletes a key: no signature from now on, its slot given back, its KMS key scheduled for deletion.
 * The record moves from its owner's listing to the deletions still to schedule; a scheduling that
 * fails is logged and left to the reconcile ({@link retryKeyDeletions}): the key is deleted for
 * its owner already.
 */
export async function deleteSigningKey(store: SigningKeyStore, key: SigningKey, now: Date): Promise<void> {
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: recordKey(key.id),
        UpdateExpression: 'SET deletedAt = :now, #gp = :deleting, #gs = :order',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deletedAt)',
        ExpressionAttributeNames: { '#gp': ENTITY_INDEX.partitionKey, '#gs': ENTITY_INDEX.sortKey },
        ExpressionAttributeValues: { ':now': now.toISOString(), ':deleting': DELETING_PARTITION, ':order': `${now.toISOString()}#${key.id}` },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return; // deleted by another request
    throw error;
  }
  await releaseSlot(store, key.keyId);
  await scheduleKmsDeletion(store, key, now).catch((error: unknown) =>
    logger.warn('signing key deleted, but its KMS key not yet scheduled for deletion; the reconcile schedules it', { signing_key_id: key.id, ...errorFields(error) }),
  );
}

/**
 * KMS ScheduleKeyDeletion for a deleted key, then recorded (the record leaves the deletions to
 * schedule). Done again, it is done: KMS answers KMSInvalidStateException for a key already pending
 * deletion, and NotFoundException for one already gone.
 */
async function scheduleKmsDeletion(store: Pick<SigningKeyStore, 'dynamo' | 'kms' | 'tableName'>, key: Pick<SigningKey, 'id' | 'kmsKeyArn'>, now: Date): Promise<void> {
  try {
    await store.kms.send(new ScheduleKeyDeletionCommand({ KeyId: key.kmsKeyArn, PendingWindowInDays: KMS_DELETION_WINDOW_DAYS }));
  } catch (error) {
    const name = (error as Error | undefined)?.name;
    if (name !== 'KMSInvalidStateException' && name !== 'NotFoundException') throw error;
  }
  await store.dynamo.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: recordKey(key.id),
      UpdateExpression: 'SET kmsDeletionScheduledAt = :now REMOVE #gp, #gs',
      ConditionExpression: 'attribute_exists(deletedAt)',
      ExpressionAttributeNames: { '#gp': ENTITY_INDEX.partitionKey, '#gs': ENTITY_INDEX.sortKey },
      ExpressionAttributeValues: { ':now': now.toISOString() },
    }),
  );
}

/**
 * The reconcile's sweep (functions/reconcile.ts; the local stack's timer): deleted signing keys
 * whose KMS key's deletion is not recorded as scheduled, oldest deletion first, at most `limit` a
 * run, get ScheduleKeyDeletion again. One that fails is logged and counted, and the rest go on; it
 * stays listed for the next run.
 */
export async function retryKeyDeletions(
  store: Pick<SigningKeyStore, 'dynamo' | 'kms' | 'tableName'>,
  now: Date,
  { limit = KEY_DELETIONS_PER_RUN }: { limit?: number } = {},
): Promise<{ scheduled: number; errors: number }> {
  const { Items = [] } = await store.dynamo.send(
    new QueryCommand({
      TableName: store.tableName,
      IndexName: ENTITY_INDEX.name,
      KeyConditionExpression: '#gp = :deleting',
      ExpressionAttributeNames: { '#gp': ENTITY_INDEX.partitionKey },
      ExpressionAttributeValues: { ':deleting': DELETING_PARTITION },
      Limit: limit,
    }),
  );
  let scheduled = 0;
  let errors = 0;
  for (const item of Items) {
    const key = asSigningKey(item);
    try {
      await scheduleKmsDeletion(store, key, now);
      scheduled++;
    } catch (error) {
      errors++;
      logger.error('deleted signing key\'s KMS key not scheduled for deletion; the next run tries again', { signing_key_id: key.id, ...errorFields(error) });
    }
  }
  return { scheduled, errors };
}

/** The DER chain of an active key, leaf first. */
export function chainOf(key: SigningKey): Uint8Array[] {
  return key.certificateChainPem ? fromPem(key.certificateChainPem, 'CERTIFICATE') : [];
}

/** One more live key for `keyId`, if it has fewer than `max` (an atomic conditional update: holds under concurrency). */
async function takeSlot(store: SigningKeyStore, keyId: string, max: number): Promise<boolean> {
  if (max < 1) return false;
  try {
    await store.dynamo.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: countKey(keyId),
        UpdateExpression: 'SET live = if_not_exists(live, :zero) + :one',
        ConditionExpression: 'attribute_not_exists(live) OR live < :max',
        ExpressionAttributeValues: { ':zero': 0, ':one': 1, ':max': max },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

async function releaseSlot(store: SigningKeyStore, keyId: string): Promise<void> {
  await store.dynamo.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: countKey(keyId),
      UpdateExpression: 'SET live = live - :one',
      ConditionExpression: 'live > :zero',
      ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
    }),
  ).catch((error: unknown) => {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  });
}
