/**
 * AWS SDK clients, built once per process (per Lambda container) and reused across invocations.
 *
 * Where the service talks to stand-ins instead of AWS (the local stack, the tests), the standard
 * SDK variables `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL_LAMBDA` and `AWS_ENDPOINT_URL_SQS`
 * point the clients at them: the SDK reads those itself, so no other module knows where it runs.
 * The only local-specific switch is path-style S3 addressing, which s3rver needs.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';

/**
 * A client built once per value of the variable that points it at an endpoint. On Lambda the value
 * never changes, so this is "once"; a local stack stopped and started again in the same process
 * (tests) runs its stand-ins on new ports, and a client kept from before would call dead ones.
 */
export function oncePerEndpoint<T>(endpointVariable: string, build: () => T): () => T {
  let built: { endpoint: string | undefined; client: T } | undefined;
  return () => {
    const endpoint = process.env[endpointVariable];
    if (!built || built.endpoint !== endpoint) built = { endpoint, client: build() };
    return built.client;
  };
}

export const dynamo = oncePerEndpoint('AWS_ENDPOINT_URL_DYNAMODB', () =>
  DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  }),
);

export const s3 = oncePerEndpoint(
  'AWS_ENDPOINT_URL_S3',
  () =>
    new S3Client({
      forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3),
      // TLS already protects the upload end to end; a CRC32 of every PDF is CPU on the hot path for nothing.
      requestChecksumCalculation: 'WHEN_REQUIRED',
    }),
);

export const lambda = oncePerEndpoint('AWS_ENDPOINT_URL_LAMBDA', () => new LambdaClient({}));

/** The bulk queue's client (lib/aws/bulk-queue.ts). */
export const sqs = oncePerEndpoint('AWS_ENDPOINT_URL_SQS', () => new SQSClient({}));

/**
 * KMS: the key that seals job requests (lib/jobs/request-keys.ts; in AWS only) and the signing keys
 * (lib/signatures/; locally the KMS stand-in, lib/local/kms-standin.ts, through AWS_ENDPOINT_URL_KMS).
 */
export const kms = oncePerEndpoint('AWS_ENDPOINT_URL_KMS', () => new KMSClient({}));

/**
 * Whether a call failed because its connection was reset as the SDK reused it (ECONNRESET, EPIPE,
 * which the SDK names TimeoutError): an idle connection the endpoint was closing. The request almost
 * never reached the service; a client whose SDK retries are off tries it again itself.
 */
export function isConnectionReset(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}
