/**
 * The synthesized stack running in the Lambda emulation, with everything around it: dynalite and
 * s3rver with the stack's table and bucket, a Secrets Manager holding the link secret, a KMS key
 * for job requests, and a key.
 * Used by the Lambda test (test/lambda/) and by the bench's cold-start and cost phase.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createApiKey } from '#lib/accounts/keys.ts';
import type { TierName } from '#lib/accounts/tiers.ts';
import { startStandIns, type StandIns } from '#lib/local/aws-standins.ts';
import { ensureBucket, ensureIdempotencyTable, ensureTable } from '#lib/local/provision.ts';
import { STACK_NAME } from '../../../cdk/stack.ts';
import { makeStage } from './environment.ts';
import { LambdaEmulator, readTemplate, type Template } from './emulator.ts';
import { startSecretsStandIn, type SecretsStandIn } from './secrets.ts';
import { startKmsStandIn, type KmsStandIn } from '../../support/kms-standin.ts';

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const TABLE = 'pdf-api-lambda';
const IDEMPOTENCY_TABLE = 'pdf-api-lambda-idempotency';
const BUCKET = 'pdf-api-lambda';
export const LINK_SECRET_ARN = `arn:aws:secretsmanager:${REGION}:000000000000:secret:pdf-api-link-signing-AbCdEf`;

export interface EmulatedStack {
  readonly outdir: string;
  readonly template: Template;
  readonly emulator: LambdaEmulator;
  readonly secrets: SecretsStandIn;
  /** The job-request key's Encrypt and Decrypt, as the functions call them. */
  readonly kms: KmsStandIn;
  /** The directory environments mount their function into. */
  readonly stage: string;
  /** A new API key of this tier, and its id. */
  createKey(tier: TierName): Promise<{ apiKey: string; keyId: string }>;
  stop(): Promise<void>;
}

/**
 * Runs the assembly in `outdir` in the emulation; `cpus` pins every environment to those CPUs
 * (`taskset -c`), as a function with less than a whole vCPU of memory would be held to one;
 * `freeze: false` keeps environments running between invocations (Lambda freezes them; the bench
 * compares), `accountConcurrency` overrides LAMBDA_ACCOUNT_CONCURRENCY.
 */
export async function startEmulatedStack(
  outdir: string,
  options: { cpus?: string; maxEnvironmentsPerFunction?: number; freeze?: boolean; accountConcurrency?: number } = {},
): Promise<EmulatedStack> {
  const template = readTemplate(outdir, STACK_NAME);
  const dataDir = mkdtempSync(join(tmpdir(), 'pdf-api-lambda-data-'));
  const standIns: StandIns = await startStandIns({ dynamo: join(dataDir, 'dynamodb'), s3: join(dataDir, 's3'), sqs: join(dataDir, 'sqs') });
  const aws = { region: REGION, credentials: CREDENTIALS };
  const dynamo = new DynamoDBClient({ ...aws, endpoint: standIns.dynamodbEndpoint });
  await ensureTable(dynamo, TABLE);
  await ensureIdempotencyTable(dynamo, IDEMPOTENCY_TABLE);
  await ensureBucket(new S3Client({ ...aws, endpoint: standIns.s3Endpoint, forcePathStyle: true }), BUCKET);
  const secrets = await startSecretsStandIn({ [LINK_SECRET_ARN]: randomBytes(32).toString('base64url') });
  const kms = await startKmsStandIn();

  // Outside /tmp (each environment mounts a /tmp of its own over it) and outside the project.
  mkdirSync('/var/tmp', { recursive: true });
  const stage = makeStage(mkdtempSync('/var/tmp/pdf-api-lambda-stage-'));
  chmodSync(stage, 0o755);
  const emulator = new LambdaEmulator({
    outdir,
    template,
    stage,
    // The template's references, as the stand-ins name them.
    resolveRef: (id, type, attribute) => {
      if (type === 'AWS::KMS::Key') return kms.keyArn;
      if (attribute) throw new Error(`no stand-in for the ${attribute} of ${type} ${id}`);
      if (type === 'AWS::DynamoDB::Table') return id.startsWith('StorageIdempotency') ? IDEMPOTENCY_TABLE : TABLE;
      if (type === 'AWS::S3::Bucket') return BUCKET;
      if (type === 'AWS::SecretsManager::Secret') return LINK_SECRET_ARN;
      if (type === 'AWS::Lambda::Function') return id;
      throw new Error(`no stand-in for ${type} ${id}`);
    },
    // What Lambda gives every function (region, the role's credentials), and where AWS is here.
    platformVariables: {
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: standIns.dynamodbEndpoint,
      AWS_ENDPOINT_URL_S3: standIns.s3Endpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
      AWS_ENDPOINT_URL_KMS: kms.endpoint,
    },
    ...(options.cpus && { cpus: options.cpus }),
    ...(options.maxEnvironmentsPerFunction && { maxEnvironmentsPerFunction: options.maxEnvironmentsPerFunction }),
    ...(options.freeze !== undefined && { freeze: options.freeze }),
    ...(options.accountConcurrency !== undefined && { accountConcurrency: options.accountConcurrency }),
  });
  await emulator.start();
  const keys = { client: DynamoDBDocumentClient.from(dynamo), tableName: TABLE };
  return {
    outdir,
    template,
    emulator,
    secrets,
    kms,
    stage,
    createKey: async (tier) => {
      const { apiKey, key } = await createApiKey(keys, { tier });
      return { apiKey, keyId: key.keyId };
    },
    stop: async () => {
      await emulator.stop();
      await secrets.close();
      await kms.close();
      await standIns.close();
      for (const dir of [dataDir, stage]) rmSync(dir, { recursive: true, force: true });
    },
  };
}
