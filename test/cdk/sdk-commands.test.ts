/**
 * Every AWS call a function's code can make is allowed by its role, and its role allows no call the
 * code cannot make. Each function is bundled here as the stack bundles it (esbuild, ES module,
 * tree-shaken, the layer's packages external), and what remains of the project's own files in the
 * bundle is read for the AWS SDK commands it builds (and the Powertools idempotency layer it uses),
 * each mapped to its IAM action. iam.test.ts checks the same roles' resources against the profiles
 * in lib/api/routes.ts; this test ties those roles to the code itself.
 */
import { build } from 'esbuild';
import { beforeAll, describe, expect, test } from 'vitest';
import { API_FUNCTIONS, FUNCTION_PROFILES, INTERNAL_FUNCTIONS } from '#lib/api/routes.ts';
import { LAYER_PACKAGES } from '../../cdk/constructs/chromium-layer.ts';
import { functionId, SECRETS_MANAGER_CLIENT } from '../../cdk/constructs/service-function.ts';
import { PROJECT_ROOT } from '../../cdk/stack.ts';
import { asArray, roleOf, statementsOfRole, synthStack } from './stack-fixture.ts';

const ALL_FUNCTIONS = [...API_FUNCTIONS, ...INTERNAL_FUNCTIONS];

/** The IAM action each SDK command needs (lib-dynamodb's document commands by their own names). */
const ACTION_OF_COMMAND: Readonly<Record<string, string>> = {
  Get: 'dynamodb:GetItem',
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  Query: 'dynamodb:Query',
  Scan: 'dynamodb:Scan',
  GetItem: 'dynamodb:GetItem',
  PutItem: 'dynamodb:PutItem',
  UpdateItem: 'dynamodb:UpdateItem',
  DeleteItem: 'dynamodb:DeleteItem',
  PutObject: 's3:PutObject',
  GetObject: 's3:GetObject',
  HeadObject: 's3:GetObject',
  DeleteObject: 's3:DeleteObject',
  ListObjectsV2: 's3:ListBucket',
  HeadBucket: 's3:ListBucket',
  Invoke: 'lambda:InvokeFunction',
  GetSecretValue: 'secretsmanager:GetSecretValue',
  Encrypt: 'kms:Encrypt',
  Decrypt: 'kms:Decrypt',
  // Signing keys (lib/signatures/signing-keys.ts).
  CreateKey: 'kms:CreateKey',
  GetPublicKey: 'kms:GetPublicKey',
  Sign: 'kms:Sign',
  ScheduleKeyDeletion: 'kms:ScheduleKeyDeletion',
  // A bulk job's manifest and archive, written as multipart uploads (lib/bulk/multipart.ts).
  CreateMultipartUpload: 's3:PutObject',
  UploadPart: 's3:PutObject',
  CompleteMultipartUpload: 's3:PutObject',
  AbortMultipartUpload: 's3:AbortMultipartUpload',
  // The bulk queue's chunks and completions (lib/aws/bulk-queue.ts).
  SendMessageBatch: 'sqs:SendMessage',
  SendMessage: 'sqs:SendMessage',
  // A bulk message whose worker caught an error, made visible again sooner (functions/bulkWorker.ts).
  ChangeMessageVisibility: 'sqs:ChangeMessageVisibility',
  GetQueueUrl: 'sqs:GetQueueUrl',
};

/** What Powertools' DynamoDB persistence layer does to the idempotency table. */
const IDEMPOTENCY_LAYER_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'];

/**
 * Commands built but never sent, by function, and why. Each is a decision: keep this list short.
 * - site presigns a GetObject URL for a key that does not exist, only to read the bucket's origin
 *   for its pages' Content-Security-Policy (lib/storage/pdfs.ts downloadOrigin): signed locally,
 *   never used, so it needs no permission.
 */
const BUILT_NOT_SENT: Readonly<Partial<Record<string, readonly string[]>>> = { site: ['s3:GetObject'] };

/**
 * Actions a role holds for Lambda itself rather than for the code: the job function's failure
 * destination (SendMessage), and the event source mappings that read a queue for a function (the
 * reconcile function on the failure queue and the bulk dead-letter queue, the bulk worker on the
 * bulk queue).
 */
function platformActions(name: string): string[] {
  const profile = FUNCTION_PROFILES[name as keyof typeof FUNCTION_PROFILES];
  return [
    ...(profile.runsJobs ? ['sqs:SendMessage'] : []),
    ...(profile.endsGivenUpJobs || profile.bulkWorker || profile.endsGivenUpChunks
      ? ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl']
      : []),
  ];
}
/** Actions every role holds for logging and tracing, which the runtime does, not the code. */
const isPlatformLogging = (action: string) => action.startsWith('logs:') || action.startsWith('xray:');

/** The code of the bundle that came from the project's own files (esbuild marks each module's start). */
function projectCode(bundle: string): string {
  const sections = bundle.split(/^(?=\/\/ (?:node_modules|lib|functions|cdk)\/)/m);
  return sections.filter((section) => /^\/\/ (?:lib|functions)\//.test(section)).join('\n');
}

/** The IAM actions the project's code in a bundle can call for. */
function actionsCalledBy(code: string): { actions: Set<string>; unknown: string[]; idempotency: boolean } {
  const actions = new Set<string>();
  const unknown: string[] = [];
  for (const [, name] of code.matchAll(/new (\w+?)Command\d*\(/g)) {
    const action = ACTION_OF_COMMAND[name!];
    if (action) actions.add(action);
    else unknown.push(`${name}Command`);
  }
  for (const [, name] of code.matchAll(/\bpaginate(\w+?)\d*\(/g)) {
    const action = ACTION_OF_COMMAND[name!];
    if (action) actions.add(action);
    else unknown.push(`paginate${name}`);
  }
  // CreateKey with Tags needs kms:TagResource too (KMS checks both).
  if (actions.has('kms:CreateKey')) actions.add('kms:TagResource');
  const idempotency = /new DynamoDBPersistenceLayer\d*\(/.test(code);
  if (idempotency) for (const action of IDEMPOTENCY_LAYER_ACTIONS) actions.add(action);
  return { actions, unknown, idempotency };
}

describe('the AWS calls in each function’s code and the role it runs with', () => {
  const { resources } = synthStack();
  const called = new Map<string, ReturnType<typeof actionsCalledBy>>();

  /** Every action a function's role allows, with the resources of each statement. */
  const grantsOf = (name: string) =>
    statementsOfRole(resources, roleOf(resources, functionId(name))).flatMap((statement) =>
      asArray(statement.Action).map((action) => ({ action, resources: asArray(statement.Resource) })),
    );

  beforeAll(async () => {
    for (const name of ALL_FUNCTIONS) {
      const result = await build({
        entryPoints: [`${PROJECT_ROOT}/functions/${name}.ts`],
        absWorkingDir: PROJECT_ROOT,
        bundle: true,
        write: false,
        format: 'esm',
        platform: 'node',
        target: 'node24',
        mainFields: ['module', 'main'],
        // As cdk/constructs/service-function.ts bundles: the layer's packages, and the Secrets Manager client where no secret is read, stay outside.
        external: [...(FUNCTION_PROFILES[name].chromium ? LAYER_PACKAGES : []), ...(FUNCTION_PROFILES[name].linkSecret ? [] : [SECRETS_MANAGER_CLIENT])],
        minify: false,
        legalComments: 'none',
        logLevel: 'silent',
      });
      called.set(name, actionsCalledBy(projectCode(result.outputFiles[0]!.text)));
    }
  }, 120_000);

  test('the bundles are read: the commands every function builds are known ones', () => {
    // Only what the code reaches: a function that neither authenticates nor stores carries no such call.
    expect([...called.get('fallback')!.actions].filter((action) => !action.startsWith('secretsmanager:'))).toEqual([]);
    for (const name of ALL_FUNCTIONS) expect(called.get(name)!.unknown, name).toEqual([]);
    // The reading finds what it should: generate stores a PDF, files presigns a download, batch invokes render.
    expect(called.get('generate')!.actions).toContain('s3:PutObject');
    expect(called.get('files')!.actions).toContain('s3:GetObject');
    expect(called.get('batch')!.actions).toContain('lambda:InvokeFunction');
  });

  test.each(ALL_FUNCTIONS)('%s: its role allows exactly the AWS calls its code can make', (name) => {
    const granted = new Set(grantsOf(name).map((grant) => grant.action).filter((action) => !isPlatformLogging(action) && !platformActions(name).includes(action)));
    // Reading a secret runs only with a `<NAME>_ARN` variable naming a secret (lib/secrets.ts; JOB_REQUEST_KEY_ARN names a KMS key): without one, the call cannot be made.
    const variables = Object.keys((resources[functionId(name)]!.Properties as { Environment?: { Variables?: object } }).Environment?.Variables ?? {});
    const readsSecrets = variables.some((variable) => variable.endsWith('_ARN') && variable !== 'JOB_REQUEST_KEY_ARN');
    // A call the role holds for the platform (the bulk worker's own ChangeMessageVisibility on the queue its mapping reads) is allowed by that grant.
    const allowedForThePlatform = (action: string) => platformActions(name).includes(action) && grantsOf(name).some((grant) => grant.action === action);
    const calls = [...called.get(name)!.actions]
      .filter((action) => !allowedForThePlatform(action))
      .filter((action) => action !== 'secretsmanager:GetSecretValue' || readsSecrets)
      .filter((action) => !BUILT_NOT_SENT[name]?.includes(action));
    expect(calls.sort()).toEqual([...granted].sort());
  });

  test.each(ALL_FUNCTIONS.filter((name) => FUNCTION_PROFILES[name].idempotency))('%s: the idempotency layer’s calls are allowed on the idempotency table', (name) => {
    expect(called.get(name)!.idempotency).toBe(true);
    const idempotencyTable = JSON.stringify(Object.keys(resources).find((id) => resources[id]!.Type === 'AWS::DynamoDB::Table' && id.startsWith('StorageIdempotency')));
    for (const action of IDEMPOTENCY_LAYER_ACTIONS) {
      expect(grantsOf(name).some((grant) => grant.action === action && JSON.stringify(grant.resources).includes(idempotencyTable)), action).toBe(true);
    }
  });

  test('functions that can send no idempotency call have no grant on its table', () => {
    for (const name of ALL_FUNCTIONS.filter((n) => !called.get(n)!.idempotency)) expect(FUNCTION_PROFILES[name].idempotency, name).toBeFalsy();
  });
});
