/**
 * Runs the AWS stand-ins (dynalite, s3rver) on a worker thread of the local stack's process, so
 * that their request handling uses another core than the API and the browser's messaging, as the
 * real services would. Started by lib/local/aws-standins.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';
import S3rver from 's3rver';

const { dynamoDirectory, s3Directory } = workerData as { dynamoDirectory: string; s3Directory: string };

// Tables become ACTIVE at once; AWS takes seconds, which only slows local start-up.
const dynamo = dynalite({ path: dynamoDirectory, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
await new Promise<void>((resolve, reject) => {
  dynamo.once('error', reject);
  dynamo.listen(0, '127.0.0.1', () => resolve());
});
const s3 = new S3rver({ address: '127.0.0.1', port: 0, directory: s3Directory, silent: true });
const s3Address = (await s3.run()) as AddressInfo;

parentPort!.postMessage({
  dynamodbEndpoint: `http://127.0.0.1:${(dynamo.address() as AddressInfo).port}`,
  s3Endpoint: `http://127.0.0.1:${s3Address.port}`,
});

parentPort!.once('message', async () => {
  await s3.close();
  await new Promise<void>((resolve) => dynamo.close(() => resolve()));
  parentPort!.postMessage('closed');
});
