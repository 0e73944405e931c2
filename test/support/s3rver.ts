/**
 * A real S3 API (s3rver, as the local stack runs it) for the tests of modules that stream into S3
 * (lib/bulk/multipart.ts and what writes through it), started in the test's own process on a free
 * port with a throw-away directory, and an S3 client configured as the service's own (path-style,
 * checksums only when required).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

export interface TestS3 {
  readonly s3: S3Client;
  readonly bucketName: string;
  readonly endpoint: string;
  /** The whole object, read back. */
  read(key: string): Promise<Buffer>;
  close(): Promise<void>;
}

export async function startTestS3(): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'pdf-api-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true });
  const address = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  const s3 = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  const bucketName = 'test-bucket';
  await s3.send(new CreateBucketCommand({ Bucket: bucketName }));
  return {
    s3,
    bucketName,
    endpoint,
    read: async (key) => {
      const { Body } = await s3.send(new GetObjectCommand({ Bucket: bucketName, Key: key }));
      return Buffer.from(await Body!.transformToByteArray());
    },
    close: async () => {
      s3.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
