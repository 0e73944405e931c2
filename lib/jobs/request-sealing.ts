/**
 * The requests of asynchronous jobs, sealed at rest. A job's request waits in the bucket until the
 * job ends, and it holds what the customer gave for fetching a `url`: `http_headers` values, the
 * `basic_auth` password, cookies (per item in a batch). docs/api.md promises those are never
 * stored in clear, so the whole request is encrypted before it is put, by envelope encryption:
 *
 * - a fresh 256-bit data key per request encrypts the request's JSON with AES-256-GCM;
 * - the data key is kept beside it only wrapped by a key-encryption key that the functions
 *   submitting jobs may use to wrap and only the function running jobs may use to unwrap: in AWS a
 *   customer-managed KMS key (Encrypt for generate and batch, Decrypt for the job function, by its
 *   key policy and their roles, cdk/constructs/storage.ts); locally a key derived from the local
 *   stack's own secret (lib/local/stack.ts), as there is no KMS there;
 * - both layers are bound to the request's object key (`jobs/<key id>/<job id>.json`): the GCM
 *   additional data of the request, and of a local wrapping, and KMS's encryption context. A
 *   request moved under another job's name, or its data key moved into another job's request,
 *   does not open.
 *
 * Wrapping and unwrapping are two separate ports on purpose: a function's bundle carries only the
 * one it uses, so the role granted to it (kms:Encrypt or kms:Decrypt) matches the code it runs
 * (test/cdk/sdk-commands.test.ts).
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** What a sealed request says it is: the format, and its version. */
export const SEALED_REQUEST_FORMAT = 'pdf-api.sealed-job-request.v1';
const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** Wraps a request's data key for the request stored under `objectKey` (the functions that submit jobs). */
export interface DataKeyWrapper {
  /** Which key-encryption key: written into the envelope, so that it is opened the same way. */
  readonly scheme: string;
  wrap(dataKey: Uint8Array, objectKey: string): Promise<Uint8Array>;
}

/** Unwraps a request's data key; fails unless it was wrapped for the same object key (the function that runs jobs). */
export interface DataKeyUnwrapper {
  readonly scheme: string;
  unwrap(wrapped: Uint8Array, objectKey: string): Promise<Uint8Array>;
}

/** A sealed request as stored: JSON, every binary field in base64. */
interface SealedRequest {
  readonly format: typeof SEALED_REQUEST_FORMAT;
  readonly scheme: string;
  /** The data key, wrapped by the scheme's key-encryption key. */
  readonly key: string;
  readonly iv: string;
  /** The request's JSON, encrypted, followed by the GCM tag. */
  readonly data: string;
}

/** A request that could not be opened: not sealed, sealed another way, tampered with, or sealed for another job. */
export class SealedRequestError extends Error {
  override readonly name = 'SealedRequestError';
}

const additionalData = (objectKey: string) => Buffer.from(`${SEALED_REQUEST_FORMAT}\n${objectKey}`, 'utf8');

function encrypt(key: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): { iv: Buffer; data: Buffer } {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES }).setAAD(aad);
  return { iv, data: Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]) };
}

/** Throws (GCM's "unable to authenticate data") when the key, the additional data or any byte differs. */
function decrypt(key: Uint8Array, iv: Uint8Array, data: Uint8Array, aad: Uint8Array): Buffer {
  if (iv.length !== IV_BYTES || data.length < TAG_BYTES) throw new SealedRequestError('The sealed job request is malformed');
  const decipher = createDecipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES }).setAAD(aad);
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
  return Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]);
}

/**
 * Encrypts a job's request for storing under `objectKey`.
 *
 * @returns the sealed request as JSON, ready to put
 */
export async function sealJobRequest(body: unknown, objectKey: string, wrapper: DataKeyWrapper): Promise<string> {
  const dataKey = randomBytes(KEY_BYTES);
  try {
    const { iv, data } = encrypt(dataKey, Buffer.from(JSON.stringify(body), 'utf8'), additionalData(objectKey));
    const wrapped = await wrapper.wrap(dataKey, objectKey);
    const sealed: SealedRequest = {
      format: SEALED_REQUEST_FORMAT,
      scheme: wrapper.scheme,
      key: Buffer.from(wrapped).toString('base64'),
      iv: iv.toString('base64'),
      data: data.toString('base64'),
    };
    return JSON.stringify(sealed);
  } finally {
    dataKey.fill(0);
  }
}

/**
 * Decrypts the request stored under `objectKey`.
 *
 * @throws SealedRequestError when it is not a request sealed by this scheme for this object key, or was altered
 */
export async function openJobRequest(stored: string, objectKey: string, unwrapper: DataKeyUnwrapper): Promise<Record<string, unknown>> {
  let sealed: Partial<SealedRequest>;
  try {
    sealed = JSON.parse(stored) as Partial<SealedRequest>;
  } catch {
    throw new SealedRequestError('The job request is not a sealed request');
  }
  if (sealed?.format !== SEALED_REQUEST_FORMAT || typeof sealed.key !== 'string' || typeof sealed.iv !== 'string' || typeof sealed.data !== 'string') {
    throw new SealedRequestError('The job request is not a sealed request');
  }
  if (sealed.scheme !== unwrapper.scheme) {
    throw new SealedRequestError(`The job request was sealed with ${String(sealed.scheme)} keys, and this deployment opens ${unwrapper.scheme} ones`);
  }
  const dataKey = Buffer.from(await unwrapper.unwrap(Buffer.from(sealed.key, 'base64'), objectKey));
  try {
    const json = decrypt(dataKey, Buffer.from(sealed.iv, 'base64'), Buffer.from(sealed.data, 'base64'), additionalData(objectKey));
    return JSON.parse(json.toString('utf8')) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof SealedRequestError) throw error;
    throw new SealedRequestError('The job request does not open: it was altered, or sealed for another job', { cause: error });
  } finally {
    dataKey.fill(0);
  }
}

/** Locally: the key-encryption key, derived from the stack's secret for this one purpose. */
function localKeyEncryptionKey(secret: string): Buffer {
  if (!secret) throw new Error('The secret job requests are sealed with is empty');
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), 'pdf-api job request keys v1', KEY_BYTES));
}

const wrappingData = (objectKey: string) => Buffer.from(`${SEALED_REQUEST_FORMAT}\nkey\n${objectKey}`, 'utf8');

/** Where there is no KMS (the local stack, tests): data keys wrapped with AES-256-GCM under a key derived from `secret`. */
export function localKeyWrapper(secret: string): DataKeyWrapper {
  const kek = localKeyEncryptionKey(secret);
  return {
    scheme: 'local',
    wrap: async (dataKey, objectKey) => {
      const { iv, data } = encrypt(kek, dataKey, wrappingData(objectKey));
      return Buffer.concat([iv, data]);
    },
  };
}

/** Unwraps what localKeyWrapper(secret) wrapped for the same object key. */
export function localKeyUnwrapper(secret: string): DataKeyUnwrapper {
  const kek = localKeyEncryptionKey(secret);
  return {
    scheme: 'local',
    unwrap: async (wrapped, objectKey) => {
      try {
        return decrypt(kek, wrapped.subarray(0, IV_BYTES), wrapped.subarray(IV_BYTES), wrappingData(objectKey));
      } catch (error) {
        if (error instanceof SealedRequestError) throw error;
        throw new SealedRequestError('The job request’s key does not open: it was altered, sealed with another secret, or for another job', { cause: error });
      }
    },
  };
}
