/**
 * A local stand-in for the part of AWS KMS the signatures use (lib/signatures/): asymmetric
 * signing keys, spoken in KMS's own JSON protocol (`X-Amz-Target: TrentService.<Operation>`), so
 * the real `@aws-sdk/client-kms` talks to it through `AWS_ENDPOINT_URL_KMS` exactly as to AWS.
 *
 * - CreateKey (KeyUsage SIGN_VERIFY; KeySpec ECC_NIST_P256 or RSA_3072; Tags), DescribeKey,
 *   GetPublicKey, Sign (MessageType DIGEST or RAW; ECDSA_SHA_256, RSASSA_PKCS1_V1_5_SHA_256),
 *   ScheduleKeyDeletion (7 to 30 days, 30 by default; the key refuses every use from then on).
 * - Keys are kept under the given directory (the stack's DATA_DIR/kms), one file each, owner-only;
 *   a private key is never answered by any operation, as in KMS.
 *
 * Node's crypto does the math. It has no "sign this digest" for ECDSA (crypto.sign always hashes),
 * so ECDSA is computed from its definition: the point k·G by an ECDH key with private value k, and
 * r, s by BigInt arithmetic modulo the group order. RSASSA-PKCS1-v1_5 over a digest is the private
 * key operation on the DigestInfo, which crypto.privateEncrypt with PKCS#1 padding is.
 */
import { createECDH, createHash, createPrivateKey, createPublicKey, generateKeyPair, privateEncrypt, randomBytes, randomUUID, constants, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AwsJsonError } from './aws-json-error.ts';

const generate = promisify(generateKeyPair);

export const KMS_STANDIN_ACCOUNT = '000000000000';
const KEY_SPECS = { ECC_NIST_P256: ['ECDSA_SHA_256'], RSA_3072: ['RSASSA_PKCS1_V1_5_SHA_256'] } as const;
type KeySpec = keyof typeof KEY_SPECS;
/** KMS's request size limit is far above this; a Sign message is at most 4096 bytes. */
const MAX_BODY_BYTES = 64 * 1024;
/** P-256's group order n. */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');
/** DER prefix of a SHA-256 DigestInfo (RFC 8017 9.2 note 1). */
const SHA256_DIGEST_INFO = Buffer.from('3031300d060960864801650304020105000420', 'hex');

interface StoredKey {
  readonly keyId: string;
  readonly arn: string;
  readonly keySpec: KeySpec;
  readonly createdAt: number;
  readonly description: string;
  readonly tags: readonly { TagKey: string; TagValue: string }[];
  readonly privateKeyPem: string;
  state: 'Enabled' | 'PendingDeletion';
  deletionDate?: number;
}

const bigintOf = (bytes: Buffer) => BigInt('0x' + (bytes.toString('hex') || '0'));
const bytesOf = (value: bigint, length: number) => Buffer.from(value.toString(16).padStart(length * 2, '0'), 'hex');
function modInverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [((a % m) + m) % m, m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return ((oldS % m) + m) % m;
}
/** A DER INTEGER of a non-negative value. */
function derInteger(value: bigint): Buffer {
  const hex = value.toString(16);
  let bytes = Buffer.from(hex.length % 2 ? '0' + hex : hex, 'hex');
  if (bytes[0]! >= 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
}

/** ECDSA over P-256 of a 32-byte digest, DER-encoded as KMS answers it (X9.62 Ecdsa-Sig-Value). */
export function ecdsaP256SignDigest(privateKey: KeyObject, digest: Buffer): Buffer {
  const d = bigintOf(Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url'));
  const z = bigintOf(digest.subarray(0, 32));
  for (;;) {
    const k = bigintOf(randomBytes(32));
    if (k === 0n || k >= P256_ORDER) continue;
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(bytesOf(k, 32));
    const point = ecdh.getPublicKey(); // 04 || x || y
    const r = bigintOf(point.subarray(1, 33)) % P256_ORDER;
    if (r === 0n) continue;
    const s = (modInverse(k, P256_ORDER) * ((z + r * d) % P256_ORDER)) % P256_ORDER;
    if (s === 0n) continue;
    const body = Buffer.concat([derInteger(r), derInteger(s)]);
    return Buffer.concat([Buffer.from([0x30, body.length]), body]);
  }
}

/** KMS's answer to one call: its HTTP status and JSON body (an error is `{ __type, message }`). */
export type KmsAnswer = { readonly status: number; readonly body: unknown };

/**
 * The stand-in's operations, by name (`TrentService.<name>` without the prefix), on keys kept
 * under `directory`: what the HTTP server below answers, and what the Lambda emulation's own KMS
 * stand-in (test/support/kms-standin.ts) answers for everything but its job-request key.
 */
export function kmsSigningOperations(options: { directory: string; region: string }): (operation: string, input: Record<string, unknown>) => Promise<KmsAnswer> {
  const keys = new Map<string, StoredKey>();
  const path = (keyId: string) => join(options.directory, `${keyId}.json`);
  const save = async (key: StoredKey) => {
    await mkdir(options.directory, { recursive: true, mode: 0o700 });
    await writeFile(path(key.keyId), JSON.stringify(key), { mode: 0o600 });
  };
  async function find(keyIdOrArn: unknown): Promise<StoredKey> {
    if (typeof keyIdOrArn !== 'string' || !keyIdOrArn) throw new AwsJsonError('ValidationException', 'KeyId is required');
    const keyId = keyIdOrArn.replace(/^arn:aws:kms:[^:]+:\d+:key\//, '');
    if (!/^[0-9a-f-]{36}$/.test(keyId)) throw new AwsJsonError('NotFoundException', `Invalid keyId ${keyIdOrArn}`);
    const known = keys.get(keyId);
    if (known) return known;
    try {
      const stored = JSON.parse(await readFile(path(keyId), 'utf8')) as StoredKey;
      keys.set(keyId, stored);
      return stored;
    } catch {
      throw new AwsJsonError('NotFoundException', `Key '${keyIdOrArn}' does not exist`);
    }
  }
  const usable = (key: StoredKey) => {
    if (key.state !== 'Enabled') throw new AwsJsonError('KMSInvalidStateException', `${key.arn} is pending deletion.`);
    return key;
  };
  const metadata = (key: StoredKey) => ({
    AWSAccountId: KMS_STANDIN_ACCOUNT,
    KeyId: key.keyId,
    Arn: key.arn,
    CreationDate: key.createdAt,
    Enabled: key.state === 'Enabled',
    Description: key.description,
    KeyUsage: 'SIGN_VERIFY',
    KeyState: key.state,
    KeyManager: 'CUSTOMER',
    Origin: 'AWS_KMS',
    KeySpec: key.keySpec,
    CustomerMasterKeySpec: key.keySpec,
    SigningAlgorithms: KEY_SPECS[key.keySpec],
    MultiRegion: false,
    ...(key.deletionDate !== undefined && { DeletionDate: key.deletionDate }),
  });

  const operations: Record<string, (input: Record<string, unknown>) => Promise<unknown>> = {
    async CreateKey(input) {
      if (input.KeyUsage !== 'SIGN_VERIFY') throw new AwsJsonError('ValidationException', 'This stand-in makes SIGN_VERIFY keys only');
      const keySpec = input.KeySpec as KeySpec;
      if (!(keySpec in KEY_SPECS)) throw new AwsJsonError('ValidationException', `KeySpec must be one of ${Object.keys(KEY_SPECS).join(', ')}`);
      const pair =
        keySpec === 'ECC_NIST_P256'
          ? await generate('ec', { namedCurve: 'prime256v1' })
          : await generate('rsa', { modulusLength: 3072, publicExponent: 0x10001 });
      const keyId = randomUUID();
      const key: StoredKey = {
        keyId,
        arn: `arn:aws:kms:${options.region}:${KMS_STANDIN_ACCOUNT}:key/${keyId}`,
        keySpec,
        createdAt: Date.now() / 1000,
        description: typeof input.Description === 'string' ? input.Description : '',
        tags: Array.isArray(input.Tags) ? (input.Tags as StoredKey['tags']) : [],
        privateKeyPem: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
        state: 'Enabled',
      };
      await save(key);
      keys.set(keyId, key);
      return { KeyMetadata: metadata(key) };
    },
    async DescribeKey(input) {
      return { KeyMetadata: metadata(await find(input.KeyId)) };
    },
    async GetPublicKey(input) {
      const key = usable(await find(input.KeyId));
      const publicKey = createPublicKey(key.privateKeyPem).export({ format: 'der', type: 'spki' });
      return { KeyId: key.arn, PublicKey: publicKey.toString('base64'), KeySpec: key.keySpec, KeyUsage: 'SIGN_VERIFY', SigningAlgorithms: KEY_SPECS[key.keySpec] };
    },
    async Sign(input) {
      const key = usable(await find(input.KeyId));
      const algorithm = input.SigningAlgorithm;
      if (!(KEY_SPECS[key.keySpec] as readonly unknown[]).includes(algorithm)) {
        throw new AwsJsonError('InvalidKeyUsageException', `SigningAlgorithm ${String(algorithm)} is not valid for ${key.keySpec}`);
      }
      if (typeof input.Message !== 'string') throw new AwsJsonError('ValidationException', 'Message is required');
      const message = Buffer.from(input.Message, 'base64');
      const messageType = input.MessageType ?? 'RAW';
      if (messageType === 'RAW' && message.length > 4096) throw new AwsJsonError('ValidationException', 'Message must be at most 4096 bytes');
      const digest = messageType === 'DIGEST' ? message : createHash('sha256').update(message).digest();
      if (digest.length !== 32) throw new AwsJsonError('ValidationException', 'Digest is invalid length for algorithm ' + String(algorithm));
      const privateKey = createPrivateKey(key.privateKeyPem);
      const signature =
        key.keySpec === 'ECC_NIST_P256'
          ? ecdsaP256SignDigest(privateKey, digest)
          : privateEncrypt({ key: privateKey, padding: constants.RSA_PKCS1_PADDING }, Buffer.concat([SHA256_DIGEST_INFO, digest]));
      return { KeyId: key.arn, Signature: signature.toString('base64'), SigningAlgorithm: algorithm };
    },
    async ScheduleKeyDeletion(input) {
      const key = await find(input.KeyId);
      const days = input.PendingWindowInDays === undefined ? 30 : Number(input.PendingWindowInDays);
      if (!Number.isInteger(days) || days < 7 || days > 30) throw new AwsJsonError('ValidationException', 'PendingWindowInDays must be between 7 and 30');
      if (key.state === 'PendingDeletion') throw new AwsJsonError('KMSInvalidStateException', `${key.arn} is pending deletion.`);
      key.state = 'PendingDeletion';
      key.deletionDate = Date.now() / 1000 + days * 86_400;
      await save(key);
      return { KeyId: key.arn, DeletionDate: key.deletionDate, KeyState: key.state, PendingWindowInDays: days };
    },
  };

  return async (name, input) => {
    try {
      const operation = Object.hasOwn(operations, name) ? operations[name] : undefined;
      if (!operation) throw new AwsJsonError('UnknownOperationException', `Not supported by the KMS stand-in: ${name}`);
      return { status: 200, body: await operation(input) };
    } catch (error) {
      if (error instanceof AwsJsonError) return { status: error.status, body: { __type: error.type, message: error.message } };
      return { status: 500, body: { __type: 'KMSInternalException', message: error instanceof Error ? error.message : String(error) } };
    }
  };
}

/** The KMS stand-in's HTTP server (not yet listening). Keys persist under `directory`. */
export function createKmsStandIn(options: { directory: string; region: string }): Server {
  const operate = kmsSigningOperations(options);
  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify(body));
    };
    try {
      const target = String(request.headers['x-amz-target'] ?? '');
      if (request.method !== 'POST' || !target.startsWith('TrentService.')) throw new AwsJsonError('UnknownOperationException', `Not supported by the KMS stand-in: ${target || request.method}`);
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of request as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) throw new AwsJsonError('ValidationException', 'Request too large');
        chunks.push(chunk);
      }
      let input: unknown;
      try {
        input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        throw new AwsJsonError('SerializationException', 'The request is not JSON');
      }
      if (!input || typeof input !== 'object') throw new AwsJsonError('SerializationException', 'The request is not a JSON object');
      const { status, body } = await operate(target.slice('TrentService.'.length), input as Record<string, unknown>);
      reply(status, body);
    } catch (error) {
      if (error instanceof AwsJsonError) return reply(error.status, { __type: error.type, message: error.message });
      reply(500, { __type: 'KMSInternalException', message: error instanceof Error ? error.message : String(error) });
    }
  }
  return createServer((request, response) => void answer(request, response));
}
