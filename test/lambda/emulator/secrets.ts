/**
 * Secrets Manager's GetSecretValue, for the secrets a template's functions are given by ARN
 * (`LINK_SIGNING_SECRET_ARN`): the functions' own SDK call, answered from here.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SecretsStandIn {
  readonly endpoint: string;
  /** Secret ids asked for, in order. */
  readonly asked: string[];
  close(): Promise<void>;
}

export async function startSecretsStandIn(secrets: Readonly<Record<string, string>>): Promise<SecretsStandIn> {
  const asked: string[] = [];
  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = String(request.headers['x-amz-target'] ?? '');
    const { SecretId } = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { SecretId?: string };
    const answer = (status: number, body: unknown) => response.writeHead(status, { 'Content-Type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));
    if (target !== 'secretsmanager.GetSecretValue') return answer(400, { __type: 'InvalidRequestException', message: `${target} is not served here` });
    asked.push(String(SecretId));
    const value = SecretId === undefined ? undefined : secrets[SecretId];
    if (value === undefined) return answer(400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
    return answer(200, { ARN: SecretId, Name: String(SecretId).split(':').pop(), SecretString: value, VersionId: 'v1', VersionStages: ['AWSCURRENT'], CreatedDate: 1_700_000_000 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
