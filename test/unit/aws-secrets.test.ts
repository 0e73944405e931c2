/**
 * lib/secrets.ts: in AWS a function gets LINK_SIGNING_SECRET_ARN and reads the value from
 * Secrets Manager once; locally nothing is fetched. The AWS SDK talks to a small Secrets Manager
 * stand-in here, through the standard endpoint variable.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { resolveSecretArns } from '#lib/secrets.ts';

const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:link-signing-AbCdEf';

describe('resolveSecretArns', () => {
  let server: Server;
  const requests: { target: string; body: Record<string, unknown> }[] = [];
  let endpoint: string;

  beforeAll(async () => {
    server = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      requests.push({ target: String(request.headers['x-amz-target']), body });
      response.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.1' });
      response.end(JSON.stringify(body.SecretId === ARN ? { ARN, Name: 'link-signing', SecretString: 's3cret-value' } : { ARN: body.SecretId, Name: 'binary' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Runs `act` with the SDK pointed at the stand-in, then restores the process environment. */
  async function withStandIn<T>(act: () => Promise<T>): Promise<T> {
    const values: Record<string, string> = {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoint,
    };
    const before = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
    Object.assign(process.env, values);
    try {
      return await act();
    } finally {
      for (const [name, value] of Object.entries(before)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  }

  test('reads the secret named by <NAME>_ARN into <NAME>', async () => {
    // Prepare
    const env: NodeJS.ProcessEnv = { LINK_SIGNING_SECRET_ARN: ARN };
    requests.length = 0;
    // Act
    await withStandIn(() => resolveSecretArns(['LINK_SIGNING_SECRET'], env));
    // Assess
    expect(env.LINK_SIGNING_SECRET).toBe('s3cret-value');
    expect(requests).toEqual([{ target: 'secretsmanager.GetSecretValue', body: { SecretId: ARN } }]);
  });

  test('does nothing without an ARN, or when the value is already set (local stack, tests)', async () => {
    requests.length = 0;
    const local: NodeJS.ProcessEnv = { LINK_SIGNING_SECRET: 'local' };
    await resolveSecretArns(['LINK_SIGNING_SECRET'], local);
    await resolveSecretArns(['LINK_SIGNING_SECRET'], { LINK_SIGNING_SECRET: 'set', LINK_SIGNING_SECRET_ARN: ARN });
    await resolveSecretArns(['LINK_SIGNING_SECRET'], {});
    expect(local.LINK_SIGNING_SECRET).toBe('local');
    expect(requests).toEqual([]);
  });

  test('refuses a secret without a string value rather than signing links with nothing', async () => {
    await withStandIn(() =>
      expect(resolveSecretArns(['LINK_SIGNING_SECRET'], { LINK_SIGNING_SECRET_ARN: 'arn:binary' })).rejects.toThrow(/no string value/),
    );
  });
});
