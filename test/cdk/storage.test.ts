/**
 * The table has the shape lib/storage/table.ts describes (the local stack builds the same one); the
 * bucket keeps PDFs private, encrypted and only as long as their retention prefix says.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, test } from 'vitest';
import { RETENTION_DAYS, TIERS } from '#lib/accounts/tiers.ts';
import { DOWNLOAD_CORS_RULE, retentionPrefix } from '#lib/storage/pdfs.ts';
import { JOB_REQUEST_PREFIX, JOB_RESULT_PREFIX, JOB_RETENTION_DAYS } from '#lib/jobs/job-records.ts';
import { BULK_MAX_RUN_MS, BULK_PREFIX, UPLOAD_PREFIX, UPLOAD_RETENTION_DAYS } from '#lib/bulk/bulk-records.ts';
import { IDEMPOTENCY_TABLE, IDEMPOTENCY_WINDOW_SECONDS, IDEMPOTENT_BODY_PREFIX } from '#lib/storage/idempotency-store.ts';
import { ENTITY_INDEX, TABLE_KEYS, TTL_ATTRIBUTE } from '#lib/storage/table.ts';
import { resourcesOfType, synthStack, type CfnResource, type SynthesizedStack } from './stack-fixture.ts';

const only = (resources: Record<string, CfnResource>, type: string, idPrefix: string): CfnResource => {
  const found = resourcesOfType(resources, type).filter(([id]) => id.startsWith(idPrefix));
  expect(found).toHaveLength(1);
  return found[0]![1];
};

describe('DynamoDB table', () => {
  let production: SynthesizedStack;
  let dev: SynthesizedStack;

  beforeAll(() => {
    production = synthStack();
    dev = synthStack({ deletionProtection: 'false' });
  });

  test('is the main table and the idempotency table, keyed and indexed as lib/storage says', () => {
    production.template.resourceCountIs('AWS::DynamoDB::Table', 2);
    expect(only(production.resources, 'AWS::DynamoDB::Table', 'StorageIdempotencyTable').Properties).toMatchObject({
      KeySchema: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: IDEMPOTENCY_TABLE.ttlAttribute, Enabled: true },
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
    });
    production.template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith(
        [TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey, ENTITY_INDEX.partitionKey, ENTITY_INDEX.sortKey].map((name) => ({
          AttributeName: name,
          AttributeType: 'S',
        })),
      ),
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
    });
  });

  test('expires items by their ttl attribute, bills on demand, keeps point-in-time recovery', () => {
    production.template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true },
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  test('is protected from deletion by default, and throw-away with -c deletionProtection=false', () => {
    const table = only(production.resources, 'AWS::DynamoDB::Table', 'StorageTable');
    expect(table.Properties?.DeletionProtectionEnabled).toBe(true);
    expect(table.DeletionPolicy).toBe('Retain');
    const devTable = only(dev.resources, 'AWS::DynamoDB::Table', 'StorageTable');
    expect(devTable.Properties?.DeletionProtectionEnabled).toBe(false);
    expect(devTable.DeletionPolicy).toBe('Delete');
    expect(only(dev.resources, 'AWS::S3::Bucket', 'StoragePdfs').DeletionPolicy).toBe('Delete');
    expect(only(production.resources, 'AWS::S3::Bucket', 'StoragePdfs').DeletionPolicy).toBe('Retain');
  });
});

describe('PDF bucket', () => {
  let stack: SynthesizedStack;
  let bucket: CfnResource;

  beforeAll(() => {
    stack = synthStack();
    bucket = only(stack.resources, 'AWS::S3::Bucket', 'StoragePdfs');
  });

  test('blocks every kind of public access and encrypts at rest', () => {
    expect(bucket.Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
    });
    expect(bucket.Properties?.VersioningConfiguration).toBeUndefined();
  });

  test('refuses plain HTTP and old TLS', () => {
    const bucketId = resourcesOfType(stack.resources, 'AWS::S3::Bucket').find(([id]) => id.startsWith('StoragePdfs'))![0];
    stack.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { NumericLessThan: { 's3:TlsVersion': 1.2 } } }),
        ]),
      },
    });
  });

  test('has one lifecycle rule per retention period, deleting PDFs within a day after their link expires', () => {
    const rules = bucket.Properties?.LifecycleConfiguration.Rules as Record<string, unknown>[];
    // One prefix per distinct link validity in the tier table.
    expect(RETENTION_DAYS).toEqual([...new Set(Object.values(TIERS).map((t) => t.linkValidityDays))]);
    for (const days of RETENTION_DAYS) {
      // S3 rounds up to the next midnight UTC: deleted between 0 and 24 h after creation + days.
      expect(rules).toContainEqual({ Id: `expire-${days}d`, Prefix: retentionPrefix(days), ExpirationInDays: days, Status: 'Enabled' });
    }
    expect(rules).toContainEqual({
      Id: 'abort-incomplete-uploads',
      AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
      Status: 'Enabled',
    });
    // Idempotent responses too large for their record go a day after they can no longer be replayed.
    expect(rules).toContainEqual({ Id: 'expire-idempotent-responses', Prefix: IDEMPOTENT_BODY_PREFIX, ExpirationInDays: IDEMPOTENCY_WINDOW_SECONDS / 86_400, Status: 'Enabled' });
    // Job requests a job could not remove go within two days; a job ends within hours.
    expect(rules).toContainEqual({ Id: 'expire-job-requests', Prefix: JOB_REQUEST_PREFIX, ExpirationInDays: 2, Status: 'Enabled' });
    expect(rules).toContainEqual({ Id: 'expire-job-results', Prefix: JOB_RESULT_PREFIX, ExpirationInDays: JOB_RETENTION_DAYS + 1, Status: 'Enabled' });
    // Bulk jobs: uploads outlive the longest job (a day); a job's objects live as long as the job.
    expect(UPLOAD_RETENTION_DAYS * 86_400_000).toBeGreaterThan(BULK_MAX_RUN_MS);
    expect(rules).toContainEqual({ Id: 'expire-uploads', Prefix: UPLOAD_PREFIX, ExpirationInDays: UPLOAD_RETENTION_DAYS, Status: 'Enabled' });
    expect(rules).toContainEqual({ Id: 'expire-bulk-jobs', Prefix: BULK_PREFIX, ExpirationInDays: JOB_RETENTION_DAYS + 1, Status: 'Enabled' });
    expect(rules).toHaveLength(RETENTION_DAYS.length + 6);
  });

  test('lets a web page read a PDF through its presigned URL (GET only, no credentials), as the local stack does', () => {
    expect(bucket.Properties?.CorsConfiguration).toEqual({
      CorsRules: [{ AllowedMethods: ['GET'], AllowedOrigins: ['*'], MaxAge: DOWNLOAD_CORS_RULE.maxAgeSeconds }],
    });
  });

  test('logs every access to a private, expiring log bucket', () => {
    const logs = resourcesOfType(stack.resources, 'AWS::S3::Bucket').find(([id]) => id.startsWith('StorageAccessLogs'))!;
    expect(bucket.Properties?.LoggingConfiguration).toEqual({ DestinationBucketName: { Ref: logs[0] }, LogFilePrefix: 'pdfs/' });
    expect(logs[1].Properties).toMatchObject({
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      LifecycleConfiguration: { Rules: [{ ExpirationInDays: 90, Status: 'Enabled' }] },
    });
  });
});

describe('link-signing secret', () => {
  test('is generated by Secrets Manager, so no one ever types or sees it', () => {
    const { template } = synthStack();
    template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true, IncludeSpace: false },
    });
  });
});
