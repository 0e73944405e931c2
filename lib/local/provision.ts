/**
 * Creates the tables and bucket the CDK stack would create, when they are missing: the local
 * counterpart of `cdk deploy`, reading the same table shape.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, HeadBucketCommand, PutBucketCorsCommand, type S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { BULK_MAX_RECEIVE_COUNT, BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS } from '#lib/bulk/bulk-records.ts';
import { DOWNLOAD_CORS_RULE } from '#lib/storage/pdfs.ts';
import { IDEMPOTENCY_TABLE } from '#lib/storage/idempotency-store.ts';
import { ENTITY_INDEX, TABLE_KEYS, TTL_ATTRIBUTE } from '#lib/storage/table.ts';

async function tableExists(client: DynamoDBClient, tableName: string): Promise<boolean> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return true;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
    return false;
  }
}

export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  if (await tableExists(client, tableName)) return;
  const stringAttribute = (name: string) => ({ AttributeName: name, AttributeType: 'S' as const });
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        stringAttribute(TABLE_KEYS.partitionKey),
        stringAttribute(TABLE_KEYS.sortKey),
        stringAttribute(ENTITY_INDEX.partitionKey),
        stringAttribute(ENTITY_INDEX.sortKey),
      ],
      KeySchema: [
        { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: ENTITY_INDEX.name,
          KeySchema: [
            { AttributeName: ENTITY_INDEX.partitionKey, KeyType: 'HASH' },
            { AttributeName: ENTITY_INDEX.sortKey, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    }),
  );
  // dynalite does not expire items, but the call keeps the local table described as AWS's is.
  await client
    .send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true } }))
    .catch(() => undefined);
}

/** The idempotency table, as cdk/constructs/storage.ts makes it. */
export async function ensureIdempotencyTable(client: DynamoDBClient, tableName: string): Promise<void> {
  if (await tableExists(client, tableName)) return;
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, KeyType: 'HASH' }],
    }),
  );
  await client
    .send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: IDEMPOTENCY_TABLE.ttlAttribute, Enabled: true } }))
    .catch(() => undefined);
}

export async function ensureBucket(client: S3Client, bucketName: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucketName }));
  } catch {
    // HeadBucket can fail for a bucket that exists (s3rver just after a kill -9 of the last run);
    // one that exists is all we need.
    await client.send(new CreateBucketCommand({ Bucket: bucketName })).catch((error: Error) => {
      if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
    });
  }
  // As the CDK stack configures the bucket (cdk/constructs/storage.ts).
  await client.send(
    new PutBucketCorsCommand({
      Bucket: bucketName,
      CORSConfiguration: {
        CORSRules: [
          {
            AllowedMethods: [...DOWNLOAD_CORS_RULE.allowedMethods],
            AllowedOrigins: [...DOWNLOAD_CORS_RULE.allowedOrigins],
            MaxAgeSeconds: DOWNLOAD_CORS_RULE.maxAgeSeconds,
          },
        ],
      },
    }),
  );
}

/** The bulk queue and its dead-letter queue, as cdk/stack.ts makes them. */
export interface BulkQueues {
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly deadLetterUrl: string;
  readonly deadLetterArn: string;
}

export async function ensureBulkQueues(client: SQSClient, name: string): Promise<BulkQueues> {
  const arnOf = async (url: string) =>
    (await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
  const deadLetterUrl = (await client.send(new CreateQueueCommand({ QueueName: `${name}-dead-letters`, Attributes: { MessageRetentionPeriod: String(14 * 86_400) } }))).QueueUrl!;
  const deadLetterArn = await arnOf(deadLetterUrl);
  const queueUrl = (
    await client.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          VisibilityTimeout: String(BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS),
          MessageRetentionPeriod: String(4 * 86_400),
          RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetterArn, maxReceiveCount: BULK_MAX_RECEIVE_COUNT }),
        },
      }),
    )
  ).QueueUrl!;
  return { queueUrl, queueArn: await arnOf(queueUrl), deadLetterUrl, deadLetterArn };
}
