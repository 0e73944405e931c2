/**
 * A throw-away in-memory dynalite with the service's table, for tests of the counters through the
 * real AWS SDK without the rest of the stack.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import type { AddressInfo } from 'node:net';
import { ensureTable } from '#lib/local/provision.ts';

export async function startTestTable() {
  const server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const raw = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    // Concurrency tests fire many requests at once; keep every one of them on its own socket.
    maxAttempts: 1,
  });
  const tableName = 'counters-test';
  await ensureTable(raw, tableName);
  return {
    store: { client: DynamoDBDocumentClient.from(raw), tableName },
    async close() {
      raw.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
