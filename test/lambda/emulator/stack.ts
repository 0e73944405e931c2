/**
 * The synthesized stack running in the Lambda emulation, with everything around it: dynalite and
 * s3rver with the stack's table and bucket, the local SQS stand-in with the stack's queues (and
 * Lambda's event source mappings reading them), a Secrets Manager holding the link secret, a KMS key
 * for job requests, and a key.
 * Used by the Lambda test (test/lambda/) and by the bench's cold-start and cost phase.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createApiKey } from '#lib/accounts/keys.ts';
import type { TierName } from '#lib/accounts/tiers.ts';
import { startStandIns, type StandIns } from '#lib/local/aws-standins.ts';
import { startEventSourceMapping, type RunningMapping } from '#lib/local/event-source-mapping.ts';
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
  /**
   * Where the queues' messages are, by queue id: waiting, and in flight (received, not yet
   * deleted), with why the event source mappings left messages to come back: what a job that stopped
   * moving waits for.
   */
  queueState(): Promise<{ queues: Record<string, { waiting: number; inFlight: number }>; leftToComeBack: Record<string, number>[] }>;
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
  const sqs = new SQSClient({ ...aws, endpoint: standIns.sqsEndpoint });
  const queues = await createQueues(sqs, template);
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
      if (type === 'AWS::SQS::Queue' && queues.has(id)) return attribute === 'Arn' ? queues.get(id)!.arn : queues.get(id)!.url;
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
      AWS_ENDPOINT_URL_SQS: standIns.sqsEndpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
      AWS_ENDPOINT_URL_KMS: kms.endpoint,
    },
    ...(options.cpus && { cpus: options.cpus }),
    ...(options.maxEnvironmentsPerFunction && { maxEnvironmentsPerFunction: options.maxEnvironmentsPerFunction }),
    ...(options.freeze !== undefined && { freeze: options.freeze }),
    ...(options.accountConcurrency !== undefined && { accountConcurrency: options.accountConcurrency }),
  });
  const lambdaEndpoint = await emulator.start();
  const mappings = startQueueMappings(template, queues, sqs, new LambdaClient({ ...aws, endpoint: lambdaEndpoint, maxAttempts: 1 }));
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
    queueState: async () => {
      const depths: Record<string, { waiting: number; inFlight: number }> = {};
      for (const [id, queue] of queues) {
        const { Attributes: attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queue.url, AttributeNames: ['All'] }));
        depths[id] = { waiting: Number(attributes.ApproximateNumberOfMessages ?? 0), inFlight: Number(attributes.ApproximateNumberOfMessagesNotVisible ?? 0) };
      }
      return { queues: depths, leftToComeBack: mappings.map((mapping) => ({ ...mapping.leftToComeBack })) };
    },
    stop: async () => {
      await Promise.all(mappings.map((mapping) => mapping.stop()));
      await emulator.stop();
      sqs.destroy();
      await secrets.close();
      await kms.close();
      await standIns.close();
      for (const dir of [dataDir, stage]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Queue {
  readonly url: string;
  readonly arn: string;
}

/** The logical id an `Fn::GetAtt` of an `Arn` names, if `value` is one. */
function arnTarget(value: unknown): string | undefined {
  const getAtt = (value as { 'Fn::GetAtt'?: unknown } | undefined)?.['Fn::GetAtt'];
  return Array.isArray(getAtt) && getAtt[1] === 'Arn' ? String(getAtt[0]) : undefined;
}

const propertiesOf = (template: Template, id: string) => (template.Resources[id]?.Properties ?? {}) as Record<string, unknown>;

/**
 * Every queue of the template in the SQS stand-in, named by its logical id, with its visibility
 * timeout, retention and redrive policy (dead-letter queues made first): what the functions send to
 * (BULK_QUEUE_URL) and what the event source mappings read.
 */
async function createQueues(sqs: SQSClient, template: Template): Promise<Map<string, Queue>> {
  const queues = new Map<string, Queue>();
  const create = async (id: string): Promise<Queue> => {
    const made = queues.get(id);
    if (made) return made;
    const properties = propertiesOf(template, id);
    const attributes: Record<string, string> = {};
    for (const name of ['VisibilityTimeout', 'MessageRetentionPeriod'] as const) {
      if (properties[name] !== undefined) attributes[name] = String(properties[name]);
    }
    const redrive = properties.RedrivePolicy as { deadLetterTargetArn?: unknown; maxReceiveCount?: number } | undefined;
    const deadLetters = arnTarget(redrive?.deadLetterTargetArn);
    if (deadLetters) attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: (await create(deadLetters)).arn, maxReceiveCount: redrive!.maxReceiveCount });
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: id, Attributes: attributes }))).QueueUrl!;
    const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
    queues.set(id, { url, arn });
    return { url, arn };
  };
  for (const [id, resource] of Object.entries(template.Resources)) if (resource.Type === 'AWS::SQS::Queue') await create(id);
  return queues;
}

/**
 * The template's event source mappings on queues the functions send to, run as Lambda's pollers run
 * them (lib/local/event-source-mapping.ts, as in the local stack) against the emulation's Invoke API,
 * so their invocations count against its concurrency. A queue that is a failure destination
 * (EventInvokeConfig OnFailure) is left to the emulator, which delivers Lambda's records there itself.
 */
function startQueueMappings(template: Template, queues: Map<string, Queue>, sqs: SQSClient, lambda: LambdaClient): RunningMapping[] {
  const resources = Object.entries(template.Resources);
  const destinations = new Set(
    resources
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::EventInvokeConfig')
      .map(([id]) => arnTarget((propertiesOf(template, id).DestinationConfig as { OnFailure?: { Destination?: unknown } } | undefined)?.OnFailure?.Destination)),
  );
  const mappings: RunningMapping[] = [];
  for (const [id, resource] of resources) {
    if (resource.Type !== 'AWS::Lambda::EventSourceMapping') continue;
    const properties = propertiesOf(template, id);
    const queueId = arnTarget(properties.EventSourceArn);
    const functionName = (properties.FunctionName as { Ref?: string } | undefined)?.Ref;
    const queue = queueId ? queues.get(queueId) : undefined;
    if (!queue || !functionName || destinations.has(queueId)) continue;
    mappings.push(
      startEventSourceMapping(
        {
          queueUrl: queue.url,
          queueArn: queue.arn,
          functionName,
          batchSize: Number(properties.BatchSize ?? 10),
          // Lambda's default without a ScalingConfig: as many pollers as it likes; the account's concurrency still bounds them.
          maximumConcurrency: Number((properties.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency ?? 1000),
          reportBatchItemFailures: ((properties.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures'),
        },
        sqs,
        lambda,
      ),
    );
  }
  return mappings;
}
