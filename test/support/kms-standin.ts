/**
 * A stand-in for KMS's Encrypt and Decrypt on one symmetric key, answering the SDK's own calls
 * (`AWS_ENDPOINT_URL_KMS`): as KMS does, it binds a ciphertext to its encryption context and refuses
 * (InvalidCiphertextException) to decrypt it under any other, or under another key id. Signing
 * keys' operations (CreateKey, GetPublicKey, Sign, ...) are the local stack's stand-in's
 * (lib/local/kms-standin.ts), on keys under a directory of its own.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kmsSigningOperations } from '#lib/local/kms-standin.ts';

export interface KmsCall {
  readonly operation: string;
  readonly keyId: string | undefined;
  readonly encryptionContext: Readonly<Record<string, string>> | undefined;
}

export interface KmsStandIn {
  readonly endpoint: string;
  readonly keyArn: string;
  /** Every call answered, in order. */
  readonly calls: KmsCall[];
  /**
   * Operations refused with AccessDeniedException, as KMS refuses a caller whose role or the key's
   * policy no longer allows them (a test adds 'Decrypt' to make every job run fail).
   */
  readonly refused: Set<string>;
  close(): Promise<void>;
}

/** The context as KMS compares it: the same pairs in any order. */
const canonicalContext = (context: Record<string, string> | undefined) =>
  JSON.stringify(Object.entries(context ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)));

export async function startKmsStandIn(keyArn = 'arn:aws:kms:us-east-1:000000000000:key/00000000-0000-4000-8000-000000000000'): Promise<KmsStandIn> {
  const material = randomBytes(32);
  const calls: KmsCall[] = [];
  const refused = new Set<string>();
  const signingKeys = mkdtempSync(join(tmpdir(), 'kms-standin-'));
  const signing = kmsSigningOperations({ directory: signingKeys, region: keyArn.split(':')[3]! });
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as {
      KeyId?: string;
      Plaintext?: string;
      CiphertextBlob?: string;
      EncryptionContext?: Record<string, string>;
    };
    const operation = String(request.headers['x-amz-target'] ?? '').replace(/^TrentService\./, '');
    calls.push({ operation, keyId: body.KeyId, encryptionContext: body.EncryptionContext });
    const answer = (status: number, payload: unknown) => response.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.1' }).end(JSON.stringify(payload));
    const aad = Buffer.from(canonicalContext(body.EncryptionContext));
    if (refused.has(operation)) return answer(400, { __type: 'AccessDeniedException', message: `The caller is not authorized to perform kms:${operation} on this key` });
    if (operation === 'Encrypt') {
      if (body.KeyId !== keyArn) return answer(400, { __type: 'NotFoundException', message: `Key '${body.KeyId}' does not exist` });
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', material, iv).setAAD(aad);
      const sealed = Buffer.concat([iv, cipher.update(Buffer.from(body.Plaintext ?? '', 'base64')), cipher.final(), cipher.getAuthTag()]);
      return answer(200, { CiphertextBlob: sealed.toString('base64'), KeyId: keyArn, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' });
    }
    if (operation === 'Decrypt') {
      if (body.KeyId !== undefined && body.KeyId !== keyArn) return answer(400, { __type: 'IncorrectKeyException', message: 'The key ID in the request does not identify the key that encrypted the ciphertext.' });
      try {
        const blob = Buffer.from(body.CiphertextBlob ?? '', 'base64');
        const decipher = createDecipheriv('aes-256-gcm', material, blob.subarray(0, 12)).setAAD(aad);
        decipher.setAuthTag(blob.subarray(blob.length - 16));
        const plaintext = Buffer.concat([decipher.update(blob.subarray(12, blob.length - 16)), decipher.final()]);
        return answer(200, { Plaintext: plaintext.toString('base64'), KeyId: keyArn, EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' });
      } catch {
        return answer(400, { __type: 'InvalidCiphertextException', message: '' });
      }
    }
    const { status, body: answered } = await signing(operation, body as Record<string, unknown>);
    return answer(status, answered);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    keyArn,
    calls,
    refused,
    close: () =>
      new Promise<void>((resolve) => server.close(() => resolve())).then(() => rmSync(signingKeys, { recursive: true, force: true })),
  };
}
