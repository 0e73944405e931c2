/**
 * Runs the AWS stand-ins (dynalite, s3rver, and our SQS, lib/local/sqs-standin.ts) in a child
 * process of the local stack's, as the real services run apart from ours: their request handling
 * uses another core than the API and the browser's messaging, and their memory (a busy DynamoDB
 * stand-in's heap grows to its bound under a bulk job) is theirs, not counted as the service's
 * (bench phase `bulk-memory` measures the two apart). Started, watched and restarted by
 * lib/local/aws-standins.ts, which passes its settings as the one argument (JSON) and talks to it
 * over the IPC channel.
 *
 * On a restart the parent passes the ports of the first start, so that the endpoints the AWS SDK
 * was pointed at stay valid; a port that cannot be had again fails the start (the parent decides).
 * If the parent goes (even by kill -9), the channel closes and this process exits at once: a
 * stand-in left behind would hold the data directory's locks and ports from the next start.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { componentLogger, errorFields } from '#lib/observability/logger.ts';
import { startSqsStandIn } from './sqs-standin.ts';

export interface StandInsSettings {
  readonly dynamoDirectory: string;
  readonly s3Directory: string;
  readonly sqsDirectory: string;
  /** 0 on the first start (a free port); the first start's ports on a restart. */
  readonly dynamoPort: number;
  readonly s3Port: number;
  readonly sqsPort: number;
}

/** What the stand-ins' process tells its parent. */
export type StandInsMessage =
  | { readonly type: 'ready'; readonly dynamodbEndpoint: string; readonly s3Endpoint: string; readonly sqsEndpoint: string }
  | { readonly type: 'closed' }
  | { readonly type: 'failed'; readonly message: string };

const { dynamoDirectory, s3Directory, sqsDirectory, dynamoPort, s3Port, sqsPort } = JSON.parse(process.argv[2]!) as StandInsSettings;
// The parent gone: nothing is served to anyone any more, and the next start needs the ports and locks.
process.once('disconnect', () => process.exit(0));
const tellParent = (message: StandInsMessage) => process.send!(message);
const logger = componentLogger('aws-standins');

interface S3rverObject {
  readonly bucket: string;
  readonly key: string;
  readonly content: Buffer | Readable;
  readonly metadata: Record<string, string>;
}
interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
}

/**
 * s3rver 3.7's putObject never listens for errors of the file it writes (and answers before the
 * file is written): a write that fails (a full disk, a directory in the way) was an uncaught
 * exception, which killed this process (or, with the handler installed below, a 200 for an object that was
 * never stored). This one answers only once the object is on disk, and a write error fails that
 * request alone (s3rver turns it into S3's 500 InternalError, which the SDK retries).
 */
function storeObjectsSafely(store: S3rverStore): void {
  store.putObject = async (object) => {
    const path = store.getResourcePath(object.bucket, object.key, 'object');
    await mkdir(dirname(path), { recursive: true });
    const md5 = createHash('md5');
    let size = 0;
    if (Buffer.isBuffer(object.content)) {
      md5.update(object.content);
      size = object.content.length;
      await writeFile(path, object.content);
    } else {
      const measure = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          md5.update(chunk);
          size += chunk.length;
          callback(null, chunk);
        },
      });
      const written = pipeline(measure, createWriteStream(path));
      const source = object.content;
      source.once('error', (error) => measure.destroy(error));
      source.pipe(measure);
      try {
        await written;
      } catch (error) {
        // Read the rest of the body unstored, so that the 500 reaches the client on this connection.
        source.unpipe(measure);
        source.resume();
        throw error;
      }
    }
    const digest = md5.digest('hex');
    await store.putMetadata(object.bucket, object.key, object.metadata, digest);
    return { size, md5: digest };
  };
}

/** Starts the three on their ports and tells the parent where; a start that fails throws (the caller tells the parent why). */
async function serve(): Promise<void> {
  // Tables become ACTIVE at once; AWS takes seconds, which only slows local start-up.
  const dynamo = dynalite({ path: dynamoDirectory, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    dynamo.once('error', reject);
    dynamo.listen(dynamoPort, '127.0.0.1', () => resolve());
  });
  const s3 = new S3rver({ address: '127.0.0.1', port: s3Port, directory: s3Directory, silent: true });
  storeObjectsSafely((s3 as unknown as { store: S3rverStore }).store);
  // Koa (under s3rver) reports every error a request ended with; S3's own answers (NoSuchKey...) are
  // not faults, anything else (a failed write) is, and the client got a 500 InternalError for it.
  s3.on('error', (error: Error & { status?: number }) => {
    if (!(typeof error.status === 'number' && error.status < 500)) logger.error('S3 stand-in request failed', errorFields(error));
  });
  const s3Address = (await s3.run().catch(async (error: unknown) => {
    // The process exits with this error; the port dynalite holds goes with it, but close it first.
    await new Promise<void>((resolve) => dynamo.close(() => resolve()));
    throw error;
  })) as AddressInfo;

  const sqs = await startSqsStandIn({ directory: sqsDirectory, port: sqsPort }).catch(async (error: unknown) => {
    await s3.close();
    await new Promise<void>((resolve) => dynamo.close(() => resolve()));
    throw error;
  });

  // Once serving, one failed request must not take both stores down with it: an error no request
  // handler caught (a stream error with no listener in a library) is logged, and they go on serving.
  // (Not before: a start that fails must fail the process, so that the parent sees why.)
  process.on('uncaughtException', (error) => logger.error('AWS stand-in error, still serving', errorFields(error)));
  process.on('unhandledRejection', (error) => logger.error('AWS stand-in error, still serving', errorFields(error)));

  tellParent({
    type: 'ready',
    dynamodbEndpoint: `http://127.0.0.1:${(dynamo.address() as AddressInfo).port}`,
    s3Endpoint: `http://127.0.0.1:${s3Address.port}`,
    sqsEndpoint: sqs.endpoint,
  });

  process.once('message', async () => {
    await sqs.close();
    await s3.close();
    await new Promise<void>((resolve) => dynamo.close(() => resolve()));
    tellParent({ type: 'closed' });
  });
}

await serve().catch((error: unknown) => {
  // The parent's supervisor decides what a failed start means (it logs it once, with its words).
  const failure = error instanceof Error ? error : new Error(String(error));
  // Exits once the message is on its way (an exit at once could lose it).
  process.send!({ type: 'failed', message: failure.message } satisfies StandInsMessage, () => process.exit(1));
});
