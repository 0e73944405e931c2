/**
 * Real local implementations of the AWS APIs the service uses: dynalite speaks DynamoDB's API,
 * s3rver speaks S3's. Both persist under the data directory and listen on free loopback ports, on
 * a worker thread of this process (lib/local/standins-worker.ts).
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';

export interface StandIns {
  readonly dynamodbEndpoint: string;
  readonly s3Endpoint: string;
  close(): Promise<void>;
}

export async function startStandIns(directories: { dynamo: string; s3: string }): Promise<StandIns> {
  const worker = new Worker(new URL('./standins-worker.ts', import.meta.url), {
    workerData: { dynamoDirectory: directories.dynamo, s3Directory: directories.s3 },
  });
  const [endpoints] = (await Promise.race([
    once(worker, 'message'),
    once(worker, 'error').then(([error]) => Promise.reject(error)),
  ])) as [{ dynamodbEndpoint: string; s3Endpoint: string }];
  return {
    ...endpoints,
    async close() {
      const closed = once(worker, 'message');
      worker.postMessage('close');
      await closed;
      await worker.terminate();
    },
  };
}
