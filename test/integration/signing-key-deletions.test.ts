/**
 * Deleting a signing key when KMS fails (lib/signatures/signing-keys.ts): the DELETE still deletes
 * the key for its owner, and the reconcile's sweep (retryKeyDeletions, run by functions/reconcile.ts
 * and the local stack's timer) schedules the KMS key's deletion later, at most so many a run, one
 * failure never stopping the others, a key already pending deletion counted as done. Through the
 * real SDK against the KMS stand-in and a throw-away dynalite table (no stack, no Chromium); KMS's
 * failures are injected in the client's middleware, as a network or service failure reaches it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KMSClient, ScheduleKeyDeletionCommand, SignCommand } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKmsStandIn } from '#lib/local/kms-standin.ts';
import { createSigningKey, deleteSigningKey, getSigningKey, retryKeyDeletions, type SigningKey, type SigningKeyStore } from '#lib/signatures/signing-keys.ts';
import { startTestTable } from '../support/dynamo.ts';

let table: Awaited<ReturnType<typeof startTestTable>>;
let directory: string;
let kmsServer: ReturnType<typeof createKmsStandIn>;
let store: SigningKeyStore;
/** KMS key ARNs whose ScheduleKeyDeletion fails, as KMS unavailable would. */
const failingDeletions = new Set<string>();

beforeAll(async () => {
  table = await startTestTable();
  directory = await mkdtemp(join(tmpdir(), 'signing-key-deletions-'));
  kmsServer = createKmsStandIn({ directory, region: 'us-east-1' });
  await new Promise<void>((resolve) => kmsServer.listen(0, '127.0.0.1', resolve));
  const kms = new KMSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${(kmsServer.address() as AddressInfo).port}`, credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  kms.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { KeyId?: string };
      if (context.commandName === 'ScheduleKeyDeletionCommand' && input.KeyId && failingDeletions.has(input.KeyId)) {
        throw Object.assign(new Error('KMS is unavailable'), { name: 'KMSInternalException', $fault: 'server' });
      }
      return next(args);
    },
    { step: 'initialize', name: 'failingDeletions' },
  );
  store = { dynamo: table.store.client, kms, tableName: table.store.tableName, stackTag: 'test' };
});
afterAll(async () => {
  store.kms.destroy();
  await new Promise<void>((resolve) => kmsServer.close(() => resolve()));
  await table.close();
  await rm(directory, { recursive: true, force: true });
});

/** Whether KMS still signs with the key (a key pending deletion refuses with KMSInvalidStateException). */
const kmsKeyUsable = (key: SigningKey) =>
  store.kms.send(new SignCommand({ KeyId: key.kmsKeyArn, Message: new Uint8Array(32), MessageType: 'DIGEST', SigningAlgorithm: 'ECDSA_SHA_256' })).then(
    () => true,
    (error: Error) => {
      if (error.name !== 'KMSInvalidStateException') throw error;
      return false;
    },
  );

it('a KMS deletion that failed at DELETE is scheduled by the sweep: bounded per run, one failure skipped, one already pending counted done', async () => {
  const keyId = 'key_deletions';
  const made = [];
  for (let i = 0; i < 3; i++) {
    made.push(await createSigningKey(store, { keyId, keySpec: 'ECC_NIST_P256', subject: { common_name: `Signer ${i}` }, selfSigned: false, now: new Date(), maxSigningKeys: 5 }));
  }
  const [first, second, third] = made as SigningKey[];

  // KMS fails every deletion: the DELETEs still succeed, and the keys are gone for their owner.
  for (const key of [first!, second!, third!]) failingDeletions.add(key.kmsKeyArn);
  for (const [index, key] of [first!, second!, third!].entries()) await deleteSigningKey(store, key, new Date(Date.UTC(2026, 10, 28, 12, 0, index)));
  for (const key of [first!, second!, third!]) {
    expect(await getSigningKey(store, keyId, key.id)).toBeUndefined();
    expect(await kmsKeyUsable(key)).toBe(true); // still billed: not scheduled
  }
  // The third's deletion reached KMS after all (its answer was lost): pending deletion already.
  failingDeletions.delete(third!.kmsKeyArn);
  await store.kms.send(new ScheduleKeyDeletionCommand({ KeyId: third!.kmsKeyArn, PendingWindowInDays: 7 }));

  // A run of two, oldest deletion first: the first still fails (logged, counted, skipped), the second is scheduled.
  failingDeletions.delete(second!.kmsKeyArn);
  expect(await retryKeyDeletions(store, new Date(), { limit: 2 })).toEqual({ scheduled: 1, errors: 1 });
  expect(await kmsKeyUsable(second!)).toBe(false);
  expect(await kmsKeyUsable(first!)).toBe(true);

  // KMS is back: the next run does the first, and the third, which KMS answers as already pending.
  failingDeletions.clear();
  expect(await retryKeyDeletions(store, new Date())).toEqual({ scheduled: 2, errors: 0 });
  for (const key of [first!, second!, third!]) expect(await kmsKeyUsable(key)).toBe(false);
  // Recorded: nothing is left to schedule.
  expect(await retryKeyDeletions(store, new Date())).toEqual({ scheduled: 0, errors: 0 });
});
