/**
 * The service's state: the one DynamoDB table (shape from lib/storage/table.ts, shared with the
 * local stack), the PDF bucket (one lifecycle rule per retention prefix, from the tier table),
 * the link-signing secret and the KMS key that seals the requests of asynchronous jobs.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, HttpMethods, ObjectOwnership, type LifecycleRule } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { RETENTION_DAYS } from '#lib/accounts/tiers.ts';
import { DOWNLOAD_CORS_RULE, retentionPrefix } from '#lib/storage/pdfs.ts';
import { IDEMPOTENCY_TABLE, IDEMPOTENCY_WINDOW_SECONDS, IDEMPOTENT_BODY_PREFIX } from '#lib/storage/idempotency-store.ts';
import { ENTITY_INDEX, TABLE_KEYS, TTL_ATTRIBUTE } from '#lib/storage/table.ts';
import { JOB_REQUEST_PREFIX, JOB_RESULT_PREFIX, JOB_RETENTION_DAYS } from '#lib/jobs/job-records.ts';
import { BULK_PREFIX, UPLOAD_PREFIX, UPLOAD_RETENTION_DAYS } from '#lib/bulk/bulk-records.ts';

/**
 * One rule per retention prefix. S3 counts `Days` from the object's creation and rounds up to the
 * next midnight UTC, so `Days = retention` removes an object between 0 and 24 hours after its
 * link expired (the link's expiry is creation + retention days) and never before: exactly
 * decisions.md's "no later than a day after their expiry". `retention + 1` would let PDFs linger
 * up to 48 hours. Incomplete multipart uploads (a bulk job's manifest or archive whose writer died,
 * lib/bulk/multipart.ts) go after a day.
 */
export function pdfLifecycleRules(): LifecycleRule[] {
  return [
    ...RETENTION_DAYS.map((days) => ({
      id: `expire-${days}d`,
      prefix: retentionPrefix(days),
      expiration: Duration.days(days),
    })),
    // Idempotent responses too large for their record (lib/api/idempotency.ts): kept as long as
    // the record (a day), rounded up to S3's next midnight.
    { id: 'expire-idempotent-responses', prefix: IDEMPOTENT_BODY_PREFIX, expiration: Duration.days(Math.ceil(IDEMPOTENCY_WINDOW_SECONDS / 86_400)) },
    // Job requests (lib/jobs/job-records.ts): removed by the job when it ends; this rule catches
    // any a job could not remove. A job ends within hours (JOB_RESERVATION_LIFETIME_MS).
    { id: 'expire-job-requests', prefix: JOB_REQUEST_PREFIX, expiration: Duration.days(2) },
    // Job results too large for the job's item: kept as long as the job (JOB_RETENTION_DAYS from
    // submission, and a job ends within hours of it), plus S3's rounding to the next midnight.
    { id: 'expire-job-results', prefix: JOB_RESULT_PREFIX, expiration: Duration.days(JOB_RETENTION_DAYS + 1) },
    // Bulk job input uploaded through POST /v1/uploads (lib/bulk/uploads.ts): its job reads it back
    // while it runs (a day at most, BULK_MAX_RUN_MS); one never submitted is garbage after its URL's hour.
    { id: 'expire-uploads', prefix: UPLOAD_PREFIX, expiration: Duration.days(UPLOAD_RETENTION_DAYS) },
    // A bulk job's own objects (lib/bulk/bulk-records.ts: its inline input, plan, chunk results,
    // manifest and archive): readable as long as the job is, plus S3's rounding to the next midnight.
    { id: 'expire-bulk-jobs', prefix: BULK_PREFIX, expiration: Duration.days(JOB_RETENTION_DAYS + 1) },
    { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
  ];
}

/**
 * What the account itself may do with the job-request key: administer it (deploy, rotate, describe,
 * delete), never use it. Encrypt and Decrypt are granted in the key policy to the roles of the
 * functions that submit and run jobs by name (cdk/stack.ts), so no other principal, not even one
 * whose IAM policy allows kms:Decrypt on every key, can open a job's request. No kms:CreateGrant
 * either: a grant would be another way to hand out Decrypt.
 */
export const JOB_REQUEST_KEY_ADMIN_ACTIONS = [
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:DescribeKey',
  'kms:DisableKey',
  'kms:DisableKeyRotation',
  'kms:EnableKey',
  'kms:EnableKeyRotation',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListAliases',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListKeyRotations',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:RevokeGrant',
  'kms:RotateKeyOnDemand',
  'kms:ScheduleKeyDeletion',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateAlias',
  'kms:UpdateKeyDescription',
] as const;

export interface StorageProps {
  /** Production: deletion protection on the table, and table, bucket and secret kept on stack deletion. */
  readonly deletionProtection: boolean;
}

export class Storage extends Construct {
  readonly table: Table;
  /** Idempotency records (lib/api/idempotency.ts): Powertools' layout, one item per key, gone by TTL. */
  readonly idempotencyTable: Table;
  readonly bucket: Bucket;
  readonly accessLogsBucket: Bucket;
  readonly linkSigningSecret: Secret;
  /**
   * Seals the requests of asynchronous jobs (lib/jobs/request-sealing.ts): their url secrets wait in
   * the bucket, encrypted under data keys this key wraps. Rotated yearly by KMS.
   */
  readonly jobRequestKey: Key;

  constructor(scope: Construct, id: string, props: StorageProps) {
    super(scope, id);
    const removalPolicy = props.deletionProtection ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const string = (name: string) => ({ name, type: AttributeType.STRING });

    this.table = new Table(this, 'Table', {
      partitionKey: string(TABLE_KEYS.partitionKey),
      sortKey: string(TABLE_KEYS.sortKey),
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: props.deletionProtection,
      removalPolicy,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: ENTITY_INDEX.name,
      partitionKey: string(ENTITY_INDEX.partitionKey),
      sortKey: string(ENTITY_INDEX.sortKey),
      projectionType: ProjectionType.ALL,
    });

    this.idempotencyTable = new Table(this, 'IdempotencyTable', {
      partitionKey: string(IDEMPOTENCY_TABLE.partitionKey),
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: IDEMPOTENCY_TABLE.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: props.deletionProtection,
      removalPolicy,
    });

    const privateBucket = {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy,
    } as const;

    // Who fetched which PDF: downloads go straight to S3 on a presigned URL, past API Gateway.
    this.accessLogsBucket = new Bucket(this, 'AccessLogs', {
      ...privateBucket,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(90) }],
    });

    this.bucket = new Bucket(this, 'Pdfs', {
      ...privateBucket,
      // Not versioned: DELETE /v1/pdf/{id} and the lifecycle rules must really remove a PDF.
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: 'pdfs/',
      lifecycleRules: pdfLifecycleRules(),
      // The playground reads a PDF through its presigned URL to show it inline (lib/storage/pdfs.ts).
      cors: [
        {
          allowedMethods: DOWNLOAD_CORS_RULE.allowedMethods.map((method) => HttpMethods[method]),
          allowedOrigins: [...DOWNLOAD_CORS_RULE.allowedOrigins],
          maxAge: DOWNLOAD_CORS_RULE.maxAgeSeconds,
        },
      ],
    });

    this.linkSigningSecret = new Secret(this, 'LinkSigningSecret', {
      description: 'HMAC key of the PDF download links; replacing it invalidates every outstanding link.',
      generateSecretString: { passwordLength: 64, excludePunctuation: true, includeSpace: false },
      removalPolicy,
    });
    this.jobRequestKey = new Key(this, 'JobRequestKey', {
      description: 'Wraps the data keys of asynchronous job requests (their url headers, basic auth and cookies); only the job function may decrypt.',
      enableKeyRotation: true,
      // The key policy in full: without it CDK would give the account kms:* (every IAM policy allowing Decrypt could then open requests).
      policy: new PolicyDocument({
        statements: [new PolicyStatement({ sid: 'AdministerOnly', actions: [...JOB_REQUEST_KEY_ADMIN_ACTIONS], principals: [new AccountRootPrincipal()], resources: ['*'] })],
      }),
      removalPolicy,
    });

    Validations.of(this.linkSigningSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Download links stay valid for up to 365 days and are verified with this one key; automatic rotation would ' +
        'break every outstanding link. Rotate deliberately (new secret value) when a leak is suspected.',
    });
  }
}
