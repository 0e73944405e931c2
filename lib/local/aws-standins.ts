/**
 * Real local implementations of the AWS APIs the service uses: dynalite speaks DynamoDB's API,
 * s3rver speaks S3's. Both persist under the data directory and listen on free loopback ports.
 */
import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';
import S3rver from 's3rver';

export interface StandIn {
  readonly endpoint: string;
  close(): Promise<void>;
}

export async function startDynamoDb(directory: string): Promise<StandIn> {
  // Tables become ACTIVE at once; AWS takes seconds, which only slows local start-up.
  const server = dynalite({ path: directory, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function startS3(directory: string): Promise<StandIn> {
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory, silent: true });
  const { port } = (await server.run()) as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      await server.close();
    },
  };
}
