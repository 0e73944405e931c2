/**
 * AWS SDK clients, built once per process (per Lambda container) and reused across invocations.
 *
 * Where the service talks to stand-ins instead of AWS (the local stack, the tests), the standard
 * SDK variables `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_S3` and `AWS_ENDPOINT_URL_LAMBDA`
 * point the clients at them: the SDK reads those itself, so no other module knows where it runs.
 * The only local-specific switch is path-style S3 addressing, which s3rver needs.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';

function once<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

export const dynamo = once(() =>
  DynamoDBDocumentClient.from(new DynamoDBClient({}), {
    marshallOptions: { removeUndefinedValues: true },
  }),
);

export const s3 = once(
  () => new S3Client({ forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) }),
);

export const lambda = once(() => new LambdaClient({}));
