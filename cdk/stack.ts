/**
 * The PDF API in AWS: one stack, everything derived from the tables the local stack also reads.
 *
 * - Routes: lib/api/routes.ts `ROUTES` (API Gateway resources and methods, see PdfRestApi).
 * - Functions: one per name in `API_FUNCTIONS` and `INTERNAL_FUNCTIONS`, built from
 *   functions/<name>.ts, sized and granted from `FUNCTION_PROFILES`.
 * - Table: lib/storage/table.ts; bucket lifecycle: the tier table's retention periods.
 *
 * Deployment switches come from CDK context (`-c name=value`), see `stackPropsFromContext`.
 */
import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, RemovalPolicy, Size, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { CfnBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct, Node } from 'constructs';
import { RETENTION_DAYS } from '#lib/accounts/tiers.ts';
import { API_FUNCTIONS, FUNCTION_PROFILES, INTERNAL_FUNCTIONS, type FunctionName, type FunctionProfile, type InternalFunctionName } from '#lib/api/routes.ts';
import { retentionPrefix } from '#lib/storage/pdfs.ts';
import { IDEMPOTENT_BODY_PREFIX } from '#lib/storage/idempotency-store.ts';
import { JOB_ASYNC_INVOKE, JOB_REQUEST_PREFIX, JOB_RESULT_PREFIX } from '#lib/jobs/job-records.ts';
import { ENTITY_INDEX } from '#lib/storage/table.ts';
import { BULK_MAX_RECEIVE_COUNT, BULK_PREFIX, BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS, BULK_WORKER_TIMEOUT_SECONDS, UPLOAD_PREFIX } from '#lib/bulk/bulk-records.ts';
import { TEMPLATE_BODY_PREFIX, TEMPLATE_KEY_PREFIX } from '#lib/storage/templates.ts';
import { HEALTH_PROBE_KEY, HEALTH_PROBE_PREFIX } from '#lib/observability/health.ts';
import { SIGNING_KEY_PREFIX, STACK_TAG } from '#lib/signatures/signing-keys.ts';
import { Alarms } from './constructs/alarms.ts';
import { ChromiumLayer } from './constructs/chromium-layer.ts';
import { concurrencyFromContext, invocationTarget, type ConcurrencySettings } from './constructs/concurrency.ts';
import { PdfRestApi } from './constructs/rest-api.ts';
import { createServiceFunction, RUNTIME } from './constructs/service-function.ts';
import { Storage } from './constructs/storage.ts';

export const STACK_NAME = 'PdfApi';
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SERVICE_NAME = 'pdf-api';
export const METRICS_NAMESPACE = 'PdfApi';

/** API Gateway gives up on an integration after 29 s (a hard limit for regional REST APIs). */
export const API_GATEWAY_TIMEOUT = Duration.seconds(29);

/**
 * Memory, /tmp and timeouts, by kind of function.
 *
 * - Chromium functions: 2048 MB. Lambda's CPU share grows with memory (one full vCPU at 1769 MB);
 *   Chromium's browser, GPU-less renderer and utility processes plus the PDF in memory need about
 *   1 GB at peak, and the extra CPU shortens both the cold start (decompressing the browser into
 *   /tmp) and every render. /tmp gets 1 GB: the browser alone unpacks to about 200 MB, plus its
 *   libraries, fonts, profile and the shared memory Chromium keeps in /tmp (--disable-dev-shm-usage).
 * - API functions that render or wait for renders (generate, batch): 28 s, inside API Gateway's 29 s, so the
 *   function stops before the gateway answers 504 for it. A render is capped at RENDER_TIMEOUT_MS
 *   (20 s), leaving 8 s for a cold start, validation and storing; batch stops waiting for items
 *   at BATCH_DEADLINE_MS (27 s) and answers with what it has.
 * - The render function (invoked by batch and by batch jobs, not the gateway) and the job function:
 *   15 minutes, Lambda's longest. A batch job's items render for up to JOB_RENDER_TIMEOUT_MS
 *   (14 minutes) plus a cold start and the upload; a synchronous batch's items stop at their own
 *   RENDER_TIMEOUT_MS, whatever the function's timeout.
 * - Everything else: 512 MB, 10 s. They make one to three DynamoDB/S3 calls of a few milliseconds;
 *   512 MB buys the CPU for a quick cold start of the bundled SDK, 10 s bounds a stuck call.
 */
export const CHROMIUM_MEMORY_MB = 2048;
export const CHROMIUM_TMP = Size.mebibytes(1024);
export const LIGHT_MEMORY_MB = 512;
export const API_LONG_TIMEOUT = Duration.seconds(28);
export const LIGHT_TIMEOUT = Duration.seconds(10);
/** The job and render functions: Lambda's longest run, for documents and batches that outlast the gateway's 29 s. */
export const JOB_TIMEOUT = Duration.minutes(15);
/** Cold start, validation and storing around a render, inside API_LONG_TIMEOUT. */
const RENDER_HEADROOM_MS = 8_000;

export interface PdfApiStackProps extends StackProps {
  /** Table deletion protection, and table, bucket, secret and logs kept when the stack is deleted. */
  readonly deletionProtection: boolean;
  /** X-Ray tracing on the API stage and every function. */
  readonly tracing: boolean;
  /** RENDER_TIMEOUT_MS of every function; decides the render function's timeout. */
  readonly renderTimeoutMs: number;
  /** Stage-wide throttling (requests per second, burst). */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /** Base of download links behind a custom domain (PUBLIC_BASE_URL); derived from the request otherwise. */
  readonly publicBaseUrl?: string;
  /**
   * The RFC 3161 time-stamp authority of signatures with `timestamp: true` (SIGNATURE_TSA_URL; context
   * `signatureTsaUrl`). Absent: `timestamp: true` is refused (400).
   */
  readonly signatureTsaUrl?: string;
  /** Subscribes this address to the alarm topic. */
  readonly alarmEmail?: string;
  /** Reserved and provisioned concurrency by function; none by default (cdk/constructs/concurrency.ts). */
  readonly concurrency?: ConcurrencySettings;
  readonly logRetention?: RetentionDays;
  /**
   * The bulk queue's event source mapping: at most this many bulk workers at once
   * (ScalingConfig.MaximumConcurrency, 2 to 1000; context `bulkMaximumConcurrency`, 100 by default),
   * leaving the rest of the account's concurrency to the API.
   */
  readonly bulkMaximumConcurrency?: number;
}

function contextFlag(node: Node, name: string, fallback: boolean): boolean {
  const value: unknown = node.tryGetContext(name);
  if (value === undefined) return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`Context ${name} must be true or false, got ${JSON.stringify(value)}`);
}

function contextInt(node: Node, name: string, fallback: number): number {
  const value: unknown = node.tryGetContext(name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`Context ${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return parsed;
}

function contextString(node: Node, name: string): string | undefined {
  const value: unknown = node.tryGetContext(name);
  return value === undefined || value === '' ? undefined : String(value);
}

/**
 * The stack's switches from CDK context, with production defaults:
 * `deletionProtection` (true; `-c deletionProtection=false` for a throw-away dev stack), `tracing`
 * (true), `renderTimeoutMs` (20000), `throttleRate` / `throttleBurst` (100 / 200 requests per
 * second), `publicBaseUrl`, `alarmEmail`, `signatureTsaUrl`, and the concurrency switches (none set by default:
 * `renderReservedConcurrency`, `generateProvisionedConcurrency`, `renderProvisionedConcurrency`).
 */
export function stackPropsFromContext(node: Node): PdfApiStackProps {
  const publicBaseUrl = contextString(node, 'publicBaseUrl');
  const alarmEmail = contextString(node, 'alarmEmail');
  const signatureTsaUrl = contextString(node, 'signatureTsaUrl');
  return {
    description: 'PDF API: HTML to PDF on API Gateway, Lambda with Chromium, DynamoDB and S3',
    deletionProtection: contextFlag(node, 'deletionProtection', true),
    tracing: contextFlag(node, 'tracing', true),
    renderTimeoutMs: contextInt(node, 'renderTimeoutMs', 20_000),
    // 100 requests/s is 6,000 a minute: six enterprise keys at their full per-key limit, far above
    // any tier, yet a ceiling on what a flood can cost. Raise it for real traffic.
    throttle: { rateLimit: contextInt(node, 'throttleRate', 100), burstLimit: contextInt(node, 'throttleBurst', 200) },
    ...(publicBaseUrl && { publicBaseUrl }),
    ...(alarmEmail && { alarmEmail }),
    ...(signatureTsaUrl && { signatureTsaUrl }),
    concurrency: concurrencyFromContext(node),
    bulkMaximumConcurrency: contextInt(node, 'bulkMaximumConcurrency', 100),
  };
}

const allFunctionNames = [...API_FUNCTIONS, ...INTERNAL_FUNCTIONS];
type AnyFunctionName = (typeof allFunctionNames)[number];

export class PdfApiStack extends Stack {
  readonly functions: Readonly<Record<AnyFunctionName, NodejsFunction>>;
  readonly storage: Storage;
  readonly restApi: PdfRestApi;
  readonly alarms: Alarms;
  readonly chromiumLayer: ChromiumLayer;
  /** The job function's failure destination (lib/jobs/jobs.ts). */
  readonly jobFailures: Queue;
  /** Failure records the reconcile function could not handle after several tries. */
  readonly jobFailuresDeadLetters: Queue;
  /** The bulk queue (one message per chunk of a bulk job, lib/aws/bulk-queue.ts) and its dead-letter queue. */
  readonly bulkQueue: Queue;
  readonly bulkDeadLetters: Queue;

  constructor(scope: Construct, id: string, props: PdfApiStackProps) {
    super(scope, id, props);
    if (props.renderTimeoutMs + RENDER_HEADROOM_MS > API_LONG_TIMEOUT.toMilliseconds()) {
      throw new Error(
        `renderTimeoutMs ${props.renderTimeoutMs} leaves no room for a cold start and storing inside ` +
          `the ${API_LONG_TIMEOUT.toSeconds()} s the API allows; use at most ${API_LONG_TIMEOUT.toMilliseconds() - RENDER_HEADROOM_MS}.`,
      );
    }
    const removalPolicy = props.deletionProtection ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;

    this.storage = new Storage(this, 'Storage', { deletionProtection: props.deletionProtection });
    const { table, bucket, linkSigningSecret, jobRequestKey } = this.storage;
    this.chromiumLayer = new ChromiumLayer(this, 'Chromium', { projectRoot: PROJECT_ROOT, runtime: RUNTIME });

    const commonEnvironment: Record<string, string> = {
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      RENDER_TIMEOUT_MS: String(props.renderTimeoutMs),
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      ...(props.publicBaseUrl && { PUBLIC_BASE_URL: props.publicBaseUrl }),
    };

    const sizing = (profile: FunctionProfile) => {
      // A function that invokes others waits for them (batch waits for its renders).
      // The bulk function reads and checks a whole upload within the API's answer: it asks for more CPU (memory).
      if (profile.timeoutSeconds) return { memorySize: profile.memoryMb ?? LIGHT_MEMORY_MB, timeout: Duration.seconds(profile.timeoutSeconds) };
      if (!profile.chromium) return { memorySize: LIGHT_MEMORY_MB, timeout: profile.invokes?.length ? API_LONG_TIMEOUT : LIGHT_TIMEOUT };
      // The bulk worker: ten lines and, for a job's last chunk, its manifest, within the queue's visibility timeout.
      if (profile.bulkWorker) return { memorySize: CHROMIUM_MEMORY_MB, ephemeralStorage: CHROMIUM_TMP, timeout: Duration.seconds(BULK_WORKER_TIMEOUT_SECONDS) };
      const longest = profile.runsJobs || profile.rendersJobItems;
      return { memorySize: CHROMIUM_MEMORY_MB, ephemeralStorage: CHROMIUM_TMP, timeout: longest ? JOB_TIMEOUT : API_LONG_TIMEOUT };
    };

    const functions = {} as Record<AnyFunctionName, NodejsFunction>;
    for (const name of allFunctionNames) {
      const profile = FUNCTION_PROFILES[name];
      functions[name] = createServiceFunction(this, {
        name,
        projectRoot: PROJECT_ROOT,
        description: `PDF API: functions/${name}.ts`,
        chromium: Boolean(profile.chromium),
        readsSecrets: Boolean(profile.linkSecret),
        siteAssets: Boolean(profile.siteAssets),
        ...(profile.chromium && { layers: [this.chromiumLayer.layer] }),
        ...sizing(profile),
        reservedConcurrentExecutions: props.concurrency?.[name]?.reserved,
        environment: {
          ...commonEnvironment,
          ...(profile.linkSecret && { LINK_SIGNING_SECRET_ARN: linkSigningSecret.secretArn }),
          ...(profile.jobRequestKey && { JOB_REQUEST_KEY_ARN: jobRequestKey.keyArn }),
          ...(profile.idempotency && { IDEMPOTENCY_TABLE_NAME: this.storage.idempotencyTable.tableName }),
          // Signing keys are the KMS keys tagged with this stack's name (lib/signatures/signing-keys.ts).
          ...(profile.signingKeys && { SIGNING_KEY_TAG: this.stackName, ...(props.signatureTsaUrl && { SIGNATURE_TSA_URL: props.signatureTsaUrl }) }),
        },
        tracing: props.tracing,
        logRetention,
        removalPolicy,
      });
    }

    // What callers invoke: the function, or its `live` alias where it has provisioned concurrency.
    const targets = Object.fromEntries(allFunctionNames.map((name) => [name, invocationTarget(functions[name], props.concurrency?.[name])])) as Record<
      AnyFunctionName,
      IFunction
    >;
    /** How a caller names a function it invokes (`<NAME>_FUNCTION_NAME`): the bare function's name, or its alias's ARN. */
    const invokedName = (name: InternalFunctionName) => (targets[name] === functions[name] ? functions[name].functionName : targets[name].functionArn);

    // Least privilege, from each function's profile: the table operations it performs on the
    // table, its queries of the entity index, its object operations under the retention prefixes
    // only, the health probes, the secret if it signs links, and invoking exactly the functions it calls.
    const objectArns = RETENTION_DAYS.map((days) => bucket.arnForObjects(`${retentionPrefix(days)}*`));
    const bucketId = this.getLogicalId(bucket.node.defaultChild as CfnBucket);
    // Job events Lambda gave up on (every run failed, or too old): the reconcile function reads
    // them at once and ends each job (lib/jobs/job-endings.ts), so a job is never left running. A
    // record it cannot handle after 5 receives goes to the dead-letter queue, kept 14 days and alarmed on.
    this.jobFailuresDeadLetters = new Queue(this, 'UnhandledJobFailures', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy,
    });
    this.jobFailures = new Queue(this, 'JobFailures', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      // Longer than the reconcile function's timeout, as an event source mapping requires.
      visibilityTimeout: Duration.seconds(6 * (FUNCTION_PROFILES.reconcile.timeoutSeconds ?? 60)),
      deadLetterQueue: { queue: this.jobFailuresDeadLetters, maxReceiveCount: 5 },
      removalPolicy,
    });
    // Bulk jobs' chunks (lib/aws/bulk-queue.ts): a standard queue whose messages carry the API key as
    // MessageGroupId, which makes it a fair queue; a chunk received BULK_MAX_RECEIVE_COUNT times
    // without getting done goes to the dead-letter queue, which the reconcile function reads (it
    // ends the chunk, lib/bulk/bulk-completion.ts) and an alarm watches.
    this.bulkDeadLetters = new Queue(this, 'BulkDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      visibilityTimeout: Duration.seconds(6 * (FUNCTION_PROFILES.reconcile.timeoutSeconds ?? 60)),
      removalPolicy,
    });
    this.bulkQueue = new Queue(this, 'BulkQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(4),
      // Longer than the worker's timeout and its chunk lease (lib/bulk/bulk-records.ts), so a message
      // delivered again after its worker died finds the chunk free.
      visibilityTimeout: Duration.seconds(BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS),
      deadLetterQueue: { queue: this.bulkDeadLetters, maxReceiveCount: BULK_MAX_RECEIVE_COUNT },
      removalPolicy,
    });
    for (const name of allFunctionNames) {
      const profile = FUNCTION_PROFILES[name];
      const fn = functions[name];
      if (profile.bulkObjects?.length) {
        for (const prefix of [BULK_PREFIX, UPLOAD_PREFIX]) {
          fn.addToRolePolicy(new PolicyStatement({ actions: profile.bulkObjects.map((op) => `s3:${op}`), resources: [bucket.arnForObjects(`${prefix}*`)] }));
          Validations.of(fn.role!).acknowledge({
            id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}*]`,
            reason: `Bulk jobs' objects and uploads are stored per key and job (${prefix}<key id>/...); the prefix is as narrow as they allow.`,
          });
        }
      }
      if (profile.removesUploads) {
        fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:DeleteObject'], resources: [bucket.arnForObjects(`${UPLOAD_PREFIX}*`)] }));
      }
      if (profile.sendsBulkChunks) {
        fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.bulkQueue.queueArn] }));
        fn.addEnvironment('BULK_QUEUE_URL', this.bulkQueue.queueUrl);
      }
      if (profile.bulkWorker) {
        // One chunk per invocation (a chunk is ten lines already); ReportBatchItemFailures so that a
        // chunk another worker holds comes back alone; MaximumConcurrency bounds the bulk fleet.
        fn.addEventSource(
          new SqsEventSource(this.bulkQueue, { batchSize: 1, reportBatchItemFailures: true, maxConcurrency: props.bulkMaximumConcurrency ?? 100 }),
        );
      }
      if (profile.endsGivenUpChunks) fn.addEventSource(new SqsEventSource(this.bulkDeadLetters, { batchSize: 10, reportBatchItemFailures: true }));
      if (profile.table?.length) {
        fn.addToRolePolicy(new PolicyStatement({ actions: profile.table.map((op) => `dynamodb:${op}`), resources: [table.tableArn] }));
      }
      if (profile.index?.length) {
        fn.addToRolePolicy(
          new PolicyStatement({ actions: profile.index.map((op) => `dynamodb:${op}`), resources: [`${table.tableArn}/index/${ENTITY_INDEX.name}`] }),
        );
      }
      if (profile.schedule) {
        new Rule(this, `${name[0]!.toUpperCase()}${name.slice(1)}Schedule`, {
          description: `PDF API: runs functions/${name}.ts`,
          schedule: Schedule.expression(profile.schedule),
          targets: [new LambdaFunction(fn, { retryAttempts: 0 })],
        });
      }
      if (profile.objects?.length) {
        fn.addToRolePolicy(new PolicyStatement({ actions: profile.objects.map((op) => `s3:${op}`), resources: objectArns }));
        for (const days of RETENTION_DAYS) {
          Validations.of(fn.role!).acknowledge({
            id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${retentionPrefix(days)}*]`,
            reason: `PDF object keys are generated per document (${retentionPrefix(days)}<key id>/<pdf id>.pdf); the retention prefix is as narrow as they allow.`,
          });
        }
      }
      for (const [operations, prefix, what] of [
        [profile.jobRequests, JOB_REQUEST_PREFIX, `Job requests are stored per job (${JOB_REQUEST_PREFIX}<key id>/<job id>.json)`],
        [profile.jobResults, JOB_RESULT_PREFIX, `Large job results are stored per job and run (${JOB_RESULT_PREFIX}<key id>/<job id>/<run>.json)`],
        [profile.templateBodies, TEMPLATE_BODY_PREFIX, `Template bodies too large for their record are stored per template (${TEMPLATE_BODY_PREFIX}<key id>/<template id>/<random>.json)`],
      ] as const) {
        if (!operations?.length) continue;
        fn.addToRolePolicy(new PolicyStatement({ actions: operations.map((op) => `s3:${op}`), resources: [bucket.arnForObjects(`${prefix}*`)] }));
        Validations.of(fn.role!).acknowledge({
          id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}*]`,
          reason: `${what}; the prefix is as narrow as they allow.`,
        });
      }
      if (profile.runsJobs) {
        // The destination by its ARN with SendMessage alone (SqsDestination would also grant
        // GetQueueAttributes and GetQueueUrl, which Lambda does not call).
        const failureQueue = this.jobFailures.queueArn;
        fn.configureAsyncInvoke({
          retryAttempts: JOB_ASYNC_INVOKE.retryAttempts,
          maxEventAge: Duration.seconds(JOB_ASYNC_INVOKE.maxEventAgeSeconds),
          onFailure: { bind: () => ({ destination: failureQueue }) },
        });
        fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [failureQueue] }));
      }
      if (profile.endsGivenUpJobs) {
        // Grants what the mapping itself calls (ReceiveMessage, DeleteMessage, ChangeMessageVisibility, GetQueueAttributes, GetQueueUrl).
        fn.addEventSource(new SqsEventSource(this.jobFailures, { batchSize: 10, reportBatchItemFailures: true }));
      }
      if (profile.healthProbes) {
        // Only the probe key and the empty probe prefix: the health check can read nothing stored.
        fn.addToRolePolicy(
          new PolicyStatement({
            actions: ['dynamodb:GetItem'],
            resources: [table.tableArn],
            conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [HEALTH_PROBE_KEY.pk] } },
          }),
        );
        fn.addToRolePolicy(
          new PolicyStatement({
            actions: ['s3:ListBucket'],
            resources: [bucket.bucketArn],
            conditions: { StringEquals: { 's3:prefix': HEALTH_PROBE_PREFIX } },
          }),
        );
      }
      if (profile.listsTemplateBodies) {
        // The bucket's listing under the template bodies' prefix only: a deleted template's bodies, found to be removed.
        fn.addToRolePolicy(
          new PolicyStatement({
            actions: ['s3:ListBucket'],
            resources: [bucket.bucketArn],
            conditions: { StringLike: { 's3:prefix': `${TEMPLATE_BODY_PREFIX}*` } },
          }),
        );
      }
      if (profile.templateReads) {
        // The templates' items only, by their partition key: a renderer reads no key, counter or record.
        fn.addToRolePolicy(
          new PolicyStatement({
            actions: ['dynamodb:GetItem'],
            resources: [table.tableArn],
            conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TEMPLATE_KEY_PREFIX}*`] } },
          }),
        );
      }
      if (profile.signingKeyReads) {
        // The signing keys' records only, by their partition key (lib/signatures/signing-keys.ts).
        fn.addToRolePolicy(
          new PolicyStatement({
            actions: ['dynamodb:GetItem'],
            resources: [table.tableArn],
            conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${SIGNING_KEY_PREFIX}*`] } },
          }),
        );
      }
      if (profile.idempotency) {
        // Powertools' record: a conditional put, a get when it exists, an update on success, a delete on failure.
        fn.addToRolePolicy(
          new PolicyStatement({
            actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
            resources: [this.storage.idempotencyTable.tableArn],
          }),
        );
        fn.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject', 's3:PutObject'], resources: [bucket.arnForObjects(`${IDEMPOTENT_BODY_PREFIX}*`)] }));
        Validations.of(fn.role!).acknowledge({
          id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${IDEMPOTENT_BODY_PREFIX}*]`,
          reason: `Idempotent responses too large for their record are kept as ${IDEMPOTENT_BODY_PREFIX}<key id>/<random>.json; the prefix is as narrow as they allow.`,
        });
      }
      // GetSecretValue only (grantRead adds DescribeSecret, which nothing calls); the secret is
      // encrypted with the AWS-managed key, so no KMS grant is needed.
      if (profile.linkSecret) fn.addToRolePolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [linkSigningSecret.secretArn] }));
      if (profile.jobRequestKey?.length) {
        // Job requests are sealed (lib/jobs/request-sealing.ts): Encrypt where jobs are submitted,
        // Decrypt only where they run. Granted by the role and by the key policy alike, which grants
        // the account no use of the key (cdk/constructs/storage.ts).
        const actions = profile.jobRequestKey.map((op) => `kms:${op}`);
        fn.addToRolePolicy(new PolicyStatement({ actions, resources: [jobRequestKey.keyArn] }));
        jobRequestKey.addToResourcePolicy(new PolicyStatement({ sid: `${name}Function`, actions, principals: [fn.role!], resources: ['*'] }));
      }
      if (profile.signingKeys?.length) {
        // Signing keys (lib/signatures/signing-keys.ts): KMS keys this stack made, known by the tag
        // it put on them. Every use is conditioned on the key carrying it, so no function reaches
        // another key of the account, whatever id it is given; creating (and tagging) only with it.
        const keys = Stack.of(this).formatArn({ service: 'kms', resource: 'key', resourceName: '*' });
        const onThisStacksKeys = { StringEquals: { [`aws:ResourceTag/${STACK_TAG}`]: this.stackName } };
        const uses = profile.signingKeys.filter((op) => op !== 'CreateKey' && op !== 'TagResource').map((op) => `kms:${op}`);
        if (uses.length) fn.addToRolePolicy(new PolicyStatement({ actions: uses, resources: [keys], conditions: onThisStacksKeys }));
        if (profile.signingKeys.includes('CreateKey')) {
          // (StringEquals with a list: any of them. The condition keys are single-valued, so no ForAllValues,
          // which would also match a request without the key.)
          const withThisStacksTag = {
            StringEquals: { [`aws:RequestTag/${STACK_TAG}`]: this.stackName, 'kms:KeyUsage': 'SIGN_VERIFY', 'kms:KeySpec': ['ECC_NIST_P256', 'RSA_3072'] },
          };
          // CreateKey has no resource to name (the key does not exist yet): `*`, bounded by the conditions.
          fn.addToRolePolicy(new PolicyStatement({ actions: ['kms:CreateKey'], resources: ['*'], conditions: withThisStacksTag }));
          fn.addToRolePolicy(new PolicyStatement({ actions: ['kms:TagResource'], resources: [keys], conditions: { StringEquals: { [`aws:RequestTag/${STACK_TAG}`]: this.stackName } } }));
          Validations.of(fn.role!).acknowledge({
            id: 'AwsSolutions-IAM5[Resource::*]',
            reason: 'kms:CreateKey names no resource; it is allowed only with this stack’s tag and for SIGN_VERIFY keys of the two specs, and every use of a key only on keys carrying the tag.',
          });
        }
        Validations.of(fn.role!).acknowledge({
          id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*]`,
          reason: 'Signing keys are made per customer at run time; which of them a function may use is decided by the aws:ResourceTag condition naming this stack.',
        });
      }
      for (const target of profile.invokes ?? []) {
        // An alias's ARN is the qualified one: the grant covers that alias alone, and the SDK takes it as FunctionName.
        fn.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [targets[target].functionArn] }));
        fn.addEnvironment(`${target.toUpperCase()}_FUNCTION_NAME`, invokedName(target));
      }
      if (props.tracing) {
        Validations.of(fn.role!).acknowledge({
          id: 'AwsSolutions-IAM5[Resource::*]',
          reason: 'X-Ray (xray:PutTraceSegments, xray:PutTelemetryRecords, added by active tracing) has no resource-level permissions.',
        });
      }
    }
    this.functions = functions;

    this.restApi = new PdfRestApi(this, 'Http', {
      handlers: Object.fromEntries(API_FUNCTIONS.map((name) => [name, targets[name]])) as Record<FunctionName, IFunction>,
      tracing: props.tracing,
      throttle: props.throttle,
      logRetention,
      removalPolicy,
    });

    this.alarms = new Alarms(this, 'Alarms', {
      api: this.restApi.api,
      functions,
      renderLogGroups: allFunctionNames.filter((name) => FUNCTION_PROFILES[name].chromium).map((name) => functions[name].logGroup),
      metricsNamespace: METRICS_NAMESPACE,
      jobFailures: this.jobFailuresDeadLetters,
      bulkChunksGivenUp: this.bulkDeadLetters,
      ...(props.alarmEmail && { email: props.alarmEmail }),
    });

    new CfnOutput(this, 'ApiUrl', { description: 'Base URL of the API', value: this.restApi.api.url });
    new CfnOutput(this, 'TableName', { description: 'DynamoDB table (TABLE_NAME for the key tool)', value: table.tableName });
    new CfnOutput(this, 'BucketName', { description: 'S3 bucket holding the PDFs', value: bucket.bucketName });
    new CfnOutput(this, 'IdempotencyTableName', {
      description: 'DynamoDB table of Idempotency-Key records (IDEMPOTENCY_TABLE_NAME, e.g. for sam local invoke)',
      value: this.storage.idempotencyTable.tableName,
    });
    new CfnOutput(this, 'LinkSigningSecretArn', {
      description: 'Secret holding the download-link key (LINK_SIGNING_SECRET_ARN, e.g. for sam local invoke)',
      value: linkSigningSecret.secretArn,
    });
    new CfnOutput(this, 'AlarmTopicArn', { description: 'SNS topic of the alarms: subscribe to be told', value: this.alarms.topic.topicArn });
    // The rest of what the functions' environments name, so that `npm run sam-env` (bin/sam-env.ts) can
    // write a complete env.json for `sam local invoke` from the outputs alone: every value of a
    // function's environment that is not a literal is one of these (test/cdk/sam-env.test.ts).
    new CfnOutput(this, 'RenderFunctionName', { description: 'The render function batch and job invoke (RENDER_FUNCTION_NAME)', value: invokedName('render') });
    new CfnOutput(this, 'JobFunctionName', { description: 'The job function generate and batch invoke for "async": true (JOB_FUNCTION_NAME)', value: invokedName('job') });
    new CfnOutput(this, 'JobRequestKeyArn', { description: 'KMS key sealing the requests of asynchronous jobs (JOB_REQUEST_KEY_ARN)', value: jobRequestKey.keyArn });
    new CfnOutput(this, 'BulkQueueUrl', { description: 'The bulk queue: one message per chunk of a bulk job (BULK_QUEUE_URL)', value: this.bulkQueue.queueUrl });
  }
}
