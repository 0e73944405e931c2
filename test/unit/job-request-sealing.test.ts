/**
 * Job requests sealed at rest (lib/jobs/request-sealing.ts, lib/jobs/request-keys.ts): what is
 * stored holds none of the request's secrets, opens back to the request, and opens only for the
 * job it was sealed for, unaltered, with the key it was sealed with. Both ways of wrapping the data
 * key are run: the local stack's secret, and KMS (a stand-in answering the SDK's own calls).
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { jobRequestKeyUnwrapper, jobRequestKeyWrapper } from '#lib/jobs/request-keys.ts';
import { putJobRequest, readJobRequest } from '#lib/jobs/job-records.ts';
import {
  localKeyUnwrapper,
  localKeyWrapper,
  openJobRequest,
  sealJobRequest,
  SealedRequestError,
  SEALED_REQUEST_FORMAT,
  type DataKeyUnwrapper,
  type DataKeyWrapper,
} from '#lib/jobs/request-sealing.ts';
import type { PdfStore } from '#lib/storage/pdfs.ts';
import { startKmsStandIn, type KmsStandIn } from '../support/kms-standin.ts';

const SECRET = 'local-stack-secret-0123456789abcdef';
const JOB = 'jobs/key_abc/job_AAAAAAAAAAAAAAAAAAAAAAAA.json';
const OTHER_JOB = 'jobs/key_abc/job_BBBBBBBBBBBBBBBBBBBBBBBB.json';

/** A request with a secret in every place one can be: headers, basic auth, cookies, and per batch item. */
const REQUEST = {
  url: 'https://intranet.example.com/report',
  http_headers: { 'X-Api-Token': 'HEADER-SECRET-7d1f' },
  basic_auth: { username: 'reporter', password: 'PASSWORD-SECRET-93ab' },
  cookies: [{ name: 'session', value: 'COOKIE-SECRET-c0de' }],
  pdfs: [{ url: 'https://intranet.example.com/a', options: { http_headers: { Authorization: 'Bearer ITEM-SECRET-5e5e' } } }],
};
const SECRETS = ['HEADER-SECRET-7d1f', 'PASSWORD-SECRET-93ab', 'COOKIE-SECRET-c0de', 'ITEM-SECRET-5e5e'];

/** The sealed request with one of its fields replaced. */
const withField = (sealed: string, name: string, value: unknown) => JSON.stringify({ ...JSON.parse(sealed), [name]: value });

/** The base64 field `name` with one bit of byte `at` flipped. */
function flipped(sealed: string, name: 'key' | 'iv' | 'data', at = 0): string {
  const bytes = Buffer.from(JSON.parse(sealed)[name] as string, 'base64');
  bytes[at] = bytes[at]! ^ 0x01;
  return withField(sealed, name, bytes.toString('base64'));
}

/** The same checks for each way of wrapping data keys. */
function sealingContract(scheme: string, keys: () => { wrapper: DataKeyWrapper; unwrapper: DataKeyUnwrapper }) {
  test(`${scheme}: round trip — the request opens exactly as it was`, async () => {
    // Prepare
    const { wrapper, unwrapper } = keys();

    // Act
    const sealed = await sealJobRequest(REQUEST, JOB, wrapper);
    const opened = await openJobRequest(sealed, JOB, unwrapper);

    // Assess
    expect(opened).toEqual(REQUEST);
    expect(JSON.parse(sealed)).toMatchObject({ format: SEALED_REQUEST_FORMAT, scheme });
  });

  test(`${scheme}: what is stored holds no secret, no field name of the request, and differs every time`, async () => {
    // Prepare
    const { wrapper } = keys();

    // Act
    const first = await sealJobRequest(REQUEST, JOB, wrapper);
    const second = await sealJobRequest(REQUEST, JOB, wrapper);

    // Assess
    for (const secret of [...SECRETS, 'intranet.example.com', 'http_headers', 'basic_auth', 'cookies']) {
      expect(first).not.toContain(secret);
      expect(Buffer.from(first).toString('base64')).not.toContain(Buffer.from(secret).toString('base64'));
    }
    for (const field of ['key', 'iv', 'data'] as const) expect(JSON.parse(first)[field]).not.toBe(JSON.parse(second)[field]);
  });

  test(`${scheme}: tampering with any part fails to open`, async () => {
    // Prepare
    const { wrapper, unwrapper } = keys();
    const sealed = await sealJobRequest(REQUEST, JOB, wrapper);
    const dataLength = Buffer.from(JSON.parse(sealed).data, 'base64').length;

    // Act
    const tampered = [
      flipped(sealed, 'data', 0),
      flipped(sealed, 'data', dataLength - 1), // the GCM tag
      flipped(sealed, 'iv'),
      flipped(sealed, 'key', 3),
      withField(sealed, 'data', Buffer.from(JSON.parse(sealed).data, 'base64').subarray(0, dataLength - 1).toString('base64')),
    ];

    // Assess
    for (const altered of tampered) await expect(openJobRequest(altered, JOB, unwrapper)).rejects.toBeInstanceOf(SealedRequestError);
  });

  test(`${scheme}: sealed for one job, it opens for no other — neither moved whole nor with its data key moved into another job's request`, async () => {
    // Prepare
    const { wrapper, unwrapper } = keys();
    const mine = await sealJobRequest(REQUEST, JOB, wrapper);
    const theirs = await sealJobRequest({ html: '<p>theirs</p>' }, OTHER_JOB, wrapper);

    // Act
    const moved = openJobRequest(mine, OTHER_JOB, unwrapper);
    const keySwapped = openJobRequest(withField(theirs, 'key', JSON.parse(mine).key), OTHER_JOB, unwrapper);
    const bodySwapped = openJobRequest(withField(theirs, 'data', JSON.parse(mine).data), OTHER_JOB, unwrapper);

    // Assess
    await expect(moved).rejects.toBeInstanceOf(SealedRequestError);
    await expect(keySwapped).rejects.toBeInstanceOf(SealedRequestError);
    await expect(bodySwapped).rejects.toBeInstanceOf(SealedRequestError);
  });

  test(`${scheme}: a request stored in clear, or not JSON, is refused rather than run`, async () => {
    // Prepare
    const { unwrapper } = keys();

    // Act / Assess
    await expect(openJobRequest(JSON.stringify(REQUEST), JOB, unwrapper)).rejects.toThrow(/not a sealed request/);
    await expect(openJobRequest('not json', JOB, unwrapper)).rejects.toThrow(/not a sealed request/);
  });
}

describe('sealed job requests, locally (a key derived from the stack’s secret)', () => {
  sealingContract('local', () => ({ wrapper: localKeyWrapper(SECRET), unwrapper: localKeyUnwrapper(SECRET) }));

  test('another secret does not open them', async () => {
    // Prepare
    const sealed = await sealJobRequest(REQUEST, JOB, localKeyWrapper(SECRET));

    // Act / Assess
    await expect(openJobRequest(sealed, JOB, localKeyUnwrapper(SECRET + 'x'))).rejects.toBeInstanceOf(SealedRequestError);
  });

  test('an empty secret is refused', () => {
    expect(() => localKeyWrapper('')).toThrow(/empty/);
  });
});

describe('sealed job requests in AWS (data keys wrapped by KMS)', () => {
  let kms: KmsStandIn;
  const saved = { ...process.env };

  beforeAll(async () => {
    kms = await startKmsStandIn();
  });
  beforeEach(() => {
    Object.assign(process.env, {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL_KMS: kms.endpoint,
      JOB_REQUEST_KEY_ARN: kms.keyArn,
    });
    delete process.env.JOB_REQUEST_SECRET;
  });
  afterEach(() => {
    for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    Object.assign(process.env, saved);
  });
  afterAll(() => kms.close());

  sealingContract('kms', () => ({ wrapper: jobRequestKeyWrapper(), unwrapper: jobRequestKeyUnwrapper() }));

  test('the data key is wrapped with Encrypt and unwrapped with Decrypt, on the configured key, under the object key as encryption context', async () => {
    // Prepare
    kms.calls.length = 0;

    // Act
    const sealed = await sealJobRequest(REQUEST, JOB, jobRequestKeyWrapper());
    await openJobRequest(sealed, JOB, jobRequestKeyUnwrapper());

    // Assess
    expect(kms.calls).toEqual([
      { operation: 'Encrypt', keyId: kms.keyArn, encryptionContext: { job_request: JOB } },
      { operation: 'Decrypt', keyId: kms.keyArn, encryptionContext: { job_request: JOB } },
    ]);
  });

  test('a request sealed locally is not opened by KMS, nor the other way round', async () => {
    // Prepare
    const kmsSealed = await sealJobRequest(REQUEST, JOB, jobRequestKeyWrapper());
    const localSealed = await sealJobRequest(REQUEST, JOB, localKeyWrapper(SECRET));

    // Act / Assess
    await expect(openJobRequest(localSealed, JOB, jobRequestKeyUnwrapper())).rejects.toThrow(/sealed with local keys/);
    await expect(openJobRequest(kmsSealed, JOB, localKeyUnwrapper(SECRET))).rejects.toThrow(/sealed with kms keys/);
  });
});

describe('putJobRequest and readJobRequest', () => {
  /** A bucket in memory: what PutObject stored, by key. */
  function memoryStore(): { store: PdfStore; objects: Map<string, string> } {
    const objects = new Map<string, string>();
    const s3 = {
      send: async (command: unknown) => {
        if (command instanceof PutObjectCommand) objects.set(command.input.Key!, String(command.input.Body));
        if (command instanceof GetObjectCommand) {
          const body = objects.get(command.input.Key!)!;
          return { Body: { transformToString: async () => body } };
        }
        return {};
      },
    };
    return { store: { s3, bucketName: 'bucket' } as unknown as PdfStore, objects };
  }

  test('the request is stored sealed for its own object key, and read back opened', async () => {
    // Prepare
    const { store, objects } = memoryStore();
    const keys = { wrapper: localKeyWrapper(SECRET), unwrapper: localKeyUnwrapper(SECRET) };

    // Act
    await putJobRequest(store, JOB, REQUEST, keys.wrapper);
    const read = await readJobRequest(store, JOB, keys.unwrapper);

    // Assess
    const stored = objects.get(JOB)!;
    for (const secret of SECRETS) expect(stored).not.toContain(secret);
    expect(JSON.parse(stored).format).toBe(SEALED_REQUEST_FORMAT);
    expect(read).toEqual(REQUEST);
    objects.set(OTHER_JOB, stored);
    await expect(readJobRequest(store, OTHER_JOB, keys.unwrapper)).rejects.toBeInstanceOf(SealedRequestError);
  });

  test('without a KMS key or a local secret nothing is stored: the setting is named', async () => {
    // Prepare
    const { store, objects } = memoryStore();
    const saved = { arn: process.env.JOB_REQUEST_KEY_ARN, secret: process.env.JOB_REQUEST_SECRET };
    delete process.env.JOB_REQUEST_KEY_ARN;
    delete process.env.JOB_REQUEST_SECRET;

    // Act / Assess
    try {
      await expect(putJobRequest(store, JOB, REQUEST)).rejects.toThrow('Setting JOB_REQUEST_SECRET is required');
      expect(objects.size).toBe(0);
    } finally {
      if (saved.arn !== undefined) process.env.JOB_REQUEST_KEY_ARN = saved.arn;
      if (saved.secret !== undefined) process.env.JOB_REQUEST_SECRET = saved.secret;
    }
  });
});
