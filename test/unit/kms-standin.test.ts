/**
 * The KMS stand-in, driven by the real @aws-sdk/client-kms through an endpoint override as the
 * service drives AWS: signatures over digests verify with the public key KMS answers, for both key
 * specs, and a key scheduled for deletion signs nothing more.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateKeyCommand, GetPublicKeyCommand, KMSClient, KMSInvalidStateException, NotFoundException, ScheduleKeyDeletionCommand, SignCommand } from '@aws-sdk/client-kms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKmsStandIn } from '#lib/local/kms-standin.ts';

let directory: string;
let server: ReturnType<typeof createKmsStandIn>;
let kms: KMSClient;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'kms-standin-'));
  server = createKmsStandIn({ directory, region: 'us-east-1' });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  kms = new KMSClient({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(async () => {
  kms.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await rm(directory, { recursive: true, force: true });
});

describe('KMS stand-in', () => {
  it.each([
    ['ECC_NIST_P256', 'ECDSA_SHA_256'],
    ['RSA_3072', 'RSASSA_PKCS1_V1_5_SHA_256'],
  ] as const)('signs digests with a %s key that verify against GetPublicKey, and keeps the private key to itself', async (keySpec, algorithm) => {
    const created = await kms.send(new CreateKeyCommand({ KeySpec: keySpec, KeyUsage: 'SIGN_VERIFY', Tags: [{ TagKey: 'stack', TagValue: 'test' }] }));
    const keyId = created.KeyMetadata!.KeyId!;
    expect(created.KeyMetadata).toMatchObject({ KeySpec: keySpec, KeyUsage: 'SIGN_VERIFY', KeyState: 'Enabled', SigningAlgorithms: [algorithm] });

    const { PublicKey } = await kms.send(new GetPublicKeyCommand({ KeyId: created.KeyMetadata!.Arn }));
    const publicKey = createPublicKey({ key: Buffer.from(PublicKey!), format: 'der', type: 'spki' });
    const message = Buffer.from('the bytes a PDF signature covers');
    const digest = createHash('sha256').update(message).digest();
    for (let i = 0; i < 3; i++) {
      const { Signature } = await kms.send(new SignCommand({ KeyId: keyId, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: algorithm }));
      expect(verify('sha256', message, publicKey, Buffer.from(Signature!))).toBe(true);
      expect(verify('sha256', Buffer.from('another message'), publicKey, Buffer.from(Signature!))).toBe(false);
    }
    // What the stand-in keeps is owner-only; no answer above carried the private key.
    const [file] = (await readdir(directory)).filter((name) => name.startsWith(keyId));
    expect(file).toBeDefined();
    expect(await readFile(join(directory, file!), 'utf8')).toContain('PRIVATE KEY');

    await kms.send(new ScheduleKeyDeletionCommand({ KeyId: keyId, PendingWindowInDays: 7 }));
    await expect(kms.send(new SignCommand({ KeyId: keyId, Message: digest, MessageType: 'DIGEST', SigningAlgorithm: algorithm }))).rejects.toBeInstanceOf(KMSInvalidStateException);
  });

  it('answers NotFoundException for a key it never made', async () => {
    await expect(kms.send(new GetPublicKeyCommand({ KeyId: '00000000-0000-4000-8000-000000000000' }))).rejects.toBeInstanceOf(NotFoundException);
  });
});
