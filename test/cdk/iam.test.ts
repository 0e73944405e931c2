/**
 * Least privilege: each function's role allows exactly what its profile in lib/api/routes.ts says,
 * on exactly the resources it concerns; only batch may invoke render; no `*` resource but X-Ray's;
 * the health function reads one probe key and lists one empty prefix, and nothing else.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { API_FUNCTIONS, FUNCTION_PROFILES, INTERNAL_FUNCTIONS, ROUTES } from '#lib/api/routes.ts';
import { openApiDocument } from '#lib/api/openapi.ts';
import { RETENTION_DAYS } from '#lib/accounts/tiers.ts';
import { IDEMPOTENT_BODY_PREFIX } from '#lib/storage/idempotency-store.ts';
import { JOB_REQUEST_PREFIX, JOB_RESULT_PREFIX } from '#lib/jobs/job-records.ts';
import { ENTITY_INDEX } from '#lib/storage/table.ts';
import { retentionPrefix } from '#lib/storage/pdfs.ts';
import { TEMPLATE_BODY_PREFIX, TEMPLATE_KEY_PREFIX } from '#lib/storage/templates.ts';
import { BULK_MAX_RECEIVE_COUNT, BULK_PREFIX, BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS, HOLD_LEASE_MS, UPLOAD_PREFIX } from '#lib/bulk/bulk-records.ts';
import { HEALTH_PROBE_KEY, HEALTH_PROBE_PREFIX } from '#lib/observability/health.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { asArray, resourcesOfType, roleOf, statementsOfRole, synthStack, type CfnResource, type Statement } from './stack-fixture.ts';

const ALL_FUNCTIONS = [...API_FUNCTIONS, ...INTERNAL_FUNCTIONS];

describe('IAM', () => {
  let resources: Record<string, CfnResource>;
  const idOf = (type: string, prefix: string) => resourcesOfType(resources, type).find(([id]) => id.startsWith(prefix))![0];

  /** Every statement of every policy attached to the function's role. */
  const statementsOf = (name: string): Statement[] => {
    const roleId = roleOf(resources, functionId(name));
    const role = resources[roleId] as CfnResource;
    expect(role.Properties?.ManagedPolicyArns).toBeUndefined();
    expect(role.Properties?.Policies).toBeUndefined();
    return statementsOfRole(resources, roleId);
  };
  /**
   * The actions of a service the function may perform, with the resources of each statement. Only
   * unconditional statements: the conditional ones (the health probes) have a test of their own.
   */
  const grants = (name: string, service: string) =>
    statementsOf(name)
      .filter((s) => s.Condition === undefined)
      .map((s) => ({ actions: asArray(s.Action).filter((a) => a.startsWith(`${service}:`)).sort(), resources: asArray(s.Resource) }))
      .filter((g) => g.actions.length > 0);

  beforeAll(() => {
    ({ resources } = synthStack());
  });

  test.each(ALL_FUNCTIONS)('%s: only Allow statements, on named resources or X-Ray', (name) => {
    for (const statement of statementsOf(name)) {
      expect(statement.Effect).toBe('Allow');
      if (asArray(statement.Resource).includes('*')) {
        // X-Ray has no resource-level permissions (the only `*`, added by active tracing), nor has
        // kms:CreateKey, allowed only with the stack's tag on the new key and for signing keys.
        if (asArray(statement.Action).includes('kms:CreateKey')) {
          expect(statement.Action).toBe('kms:CreateKey');
          expect(statement.Condition).toMatchObject({ StringEquals: { 'aws:RequestTag/pdf-api:stack': expect.anything(), 'kms:KeyUsage': 'SIGN_VERIFY' } });
        } else expect(asArray(statement.Action).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
      }
    }
  });

  test.each(ALL_FUNCTIONS)('%s: writes its own log group, and no other', (name) => {
    expect(grants(name, 'logs')).toEqual([
      { actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [{ 'Fn::GetAtt': [idOf('AWS::Logs::LogGroup', `${functionId(name)}Logs`), 'Arn'] }] },
    ]);
  });

  /** Every (action, resource) pair granted for a service, however CDK merged them into statements. */
  const pairs = (name: string, service: string) =>
    grants(name, service)
      .flatMap((grant) => grant.actions.flatMap((action) => grant.resources.map((resource) => `${action} ${JSON.stringify(resource)}`)))
      .sort();

  test.each(ALL_FUNCTIONS)('%s: exactly its profile’s table operations on the table, and its queries on the entity index only', (name) => {
    const table = { 'Fn::GetAtt': [idOf('AWS::DynamoDB::Table', 'StorageTable'), 'Arn'] };
    const index = { 'Fn::Join': ['', [table, `/index/${ENTITY_INDEX.name}`]] };
    const idempotencyTable = { 'Fn::GetAtt': [idOf('AWS::DynamoDB::Table', 'StorageIdempotencyTable'), 'Arn'] };
    const on = (resource: unknown) => (op: string) => `dynamodb:${op} ${JSON.stringify(resource)}`;
    expect(pairs(name, 'dynamodb')).toEqual(
      [
        ...(FUNCTION_PROFILES[name].table ?? []).map(on(table)),
        ...(FUNCTION_PROFILES[name].index ?? []).map(on(index)),
        ...(FUNCTION_PROFILES[name].idempotency ? ['DeleteItem', 'GetItem', 'PutItem', 'UpdateItem'].map(on(idempotencyTable)) : []),
      ].sort(),
    );
  });

  test('every function behind a keyed route may read the key (GetItem) and count the request (UpdateItem)', () => {
    const document = openApiDocument({ serverUrl: 'https://api.example.com' }) as any;
    const keyed = ROUTES.filter((route) => document.paths[route.path]?.[route.method.toLowerCase()]?.security?.length).map((route) => route.handler);
    expect(new Set(keyed)).toEqual(new Set(['generate', 'batch', 'pdfs', 'jobs', 'usage', 'templates', 'preview', 'bulk', 'uploads', 'signingKeys']));
    for (const name of keyed) expect(FUNCTION_PROFILES[name].table, name).toEqual(expect.arrayContaining(['GetItem', 'UpdateItem']));
  });

  test('the reconciliation runs every five minutes and the webhook sender every minute, each on its one rule', () => {
    const rules = resourcesOfType(resources, 'AWS::Events::Rule').map(([, rule]) => rule.Properties as Record<string, any>);
    expect(rules).toHaveLength(2);
    const ruleOf = (name: string) => rules.find((rule) => JSON.stringify(rule.Targets).includes(functionId(name)));
    expect(ruleOf('reconcile')).toMatchObject({ ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED' });
    expect(ruleOf('webhooks')).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
  });

  test.each(ALL_FUNCTIONS)('%s: exactly its profile’s object operations, under the retention prefixes only (idempotent responses, job requests, job results and template bodies under theirs)', (name) => {
    const bucketArn = { 'Fn::GetAtt': [idOf('AWS::S3::Bucket', 'StoragePdfs'), 'Arn'] };
    const under = (prefix: string) => JSON.stringify({ 'Fn::Join': ['', [bucketArn, `/${prefix}*`]] });
    const granted = pairs(name, 's3');
    const wanted = [
      ...(FUNCTION_PROFILES[name].objects ?? []).flatMap((op) => RETENTION_DAYS.map((days) => `s3:${op} ${under(retentionPrefix(days))}`)),
      ...(FUNCTION_PROFILES[name].idempotency ? ['s3:GetObject', 's3:PutObject'].map((action) => `${action} ${under(IDEMPOTENT_BODY_PREFIX)}`) : []),
      ...(FUNCTION_PROFILES[name].jobRequests ?? []).map((op) => `s3:${op} ${under(JOB_REQUEST_PREFIX)}`),
      ...(FUNCTION_PROFILES[name].jobResults ?? []).map((op) => `s3:${op} ${under(JOB_RESULT_PREFIX)}`),
      ...(FUNCTION_PROFILES[name].templateBodies ?? []).map((op) => `s3:${op} ${under(TEMPLATE_BODY_PREFIX)}`),
      ...(FUNCTION_PROFILES[name].bulkObjects ?? []).flatMap((op) => [BULK_PREFIX, UPLOAD_PREFIX].map((prefix) => `s3:${op} ${under(prefix)}`)),
      ...(FUNCTION_PROFILES[name].removesUploads ? [`s3:DeleteObject ${under(UPLOAD_PREFIX)}`] : []),
    ];
    expect(granted.sort()).toEqual(wanted.sort());
  });

  test.each(ALL_FUNCTIONS)('%s: health probes only if it checks health (the probe key and the empty probe prefix), template bodies listed only if it deletes templates (their prefix), template reads only if it renders batch items (the templates’ keys), nothing else conditional', (name) => {
    const conditional = statementsOf(name)
      // Signing keys' KMS statements, all conditioned on the stack's tag, have a test of their own.
      .filter((s) => s.Condition !== undefined && !asArray(s.Action).some((action) => action.startsWith('kms:')))
      .map((s) => ({ actions: asArray(s.Action), resources: asArray(s.Resource), condition: s.Condition }));
    const probes = [
      {
        actions: ['dynamodb:GetItem'],
        resources: [{ 'Fn::GetAtt': [idOf('AWS::DynamoDB::Table', 'StorageTable'), 'Arn'] }],
        condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [HEALTH_PROBE_KEY.pk] } },
      },
      {
        actions: ['s3:ListBucket'],
        resources: [{ 'Fn::GetAtt': [idOf('AWS::S3::Bucket', 'StoragePdfs'), 'Arn'] }],
        condition: { StringEquals: { 's3:prefix': HEALTH_PROBE_PREFIX } },
      },
    ];
    const templateReads = {
      actions: ['dynamodb:GetItem'],
      resources: [{ 'Fn::GetAtt': [idOf('AWS::DynamoDB::Table', 'StorageTable'), 'Arn'] }],
      condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TEMPLATE_KEY_PREFIX}*`] } },
    };
    const templateBodyListing = {
      actions: ['s3:ListBucket'],
      resources: [{ 'Fn::GetAtt': [idOf('AWS::S3::Bucket', 'StoragePdfs'), 'Arn'] }],
      condition: { StringLike: { 's3:prefix': `${TEMPLATE_BODY_PREFIX}*` } },
    };
    expect(conditional).toEqual([
      ...(FUNCTION_PROFILES[name].healthProbes ? probes : []),
      ...(FUNCTION_PROFILES[name].listsTemplateBodies ? [templateBodyListing] : []),
      ...(FUNCTION_PROFILES[name].templateReads ? [templateReads] : []),
      ...(FUNCTION_PROFILES[name].signingKeyReads ? [{ ...templateReads, condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['SIGNINGKEY#*'] } } }] : []),
    ]);
  });

  test('the render function reads stored templates and nothing else of the table', () => {
    expect(FUNCTION_PROFILES.render.table).toBeUndefined();
    expect(FUNCTION_PROFILES.render.templateReads).toBe(true);
  });

  test('only the health function checks health', () => {
    expect(ALL_FUNCTIONS.filter((name) => FUNCTION_PROFILES[name].healthProbes)).toEqual(['health']);
  });

  test.each(ALL_FUNCTIONS)('%s: reads the link-signing secret only if it signs links', (name) => {
    const secret = { Ref: idOf('AWS::SecretsManager::Secret', 'StorageLinkSigningSecret') };
    expect(grants(name, 'secretsmanager')).toEqual(
      FUNCTION_PROFILES[name].linkSecret ? [{ actions: ['secretsmanager:GetSecretValue'], resources: [secret] }] : [],
    );
  });

  test.each(ALL_FUNCTIONS)('%s: touches no service it has no business with', (name) => {
    const services = new Set(statementsOf(name).flatMap((s) => asArray(s.Action).map((a) => a.split(':')[0])));
    const allowed = new Set([
      'logs',
      'xray',
      'dynamodb',
      's3',
      'secretsmanager',
      'lambda',
      ...(FUNCTION_PROFILES[name].runsJobs ||
      FUNCTION_PROFILES[name].endsGivenUpJobs ||
      FUNCTION_PROFILES[name].sendsBulkChunks ||
      FUNCTION_PROFILES[name].bulkWorker ||
      FUNCTION_PROFILES[name].endsGivenUpChunks
        ? ['sqs']
        : []),
      ...(FUNCTION_PROFILES[name].jobRequestKey || FUNCTION_PROFILES[name].signingKeys ? ['kms'] : []),
    ]);
    for (const service of services) expect(allowed).toContain(service);
  });

  test.each(ALL_FUNCTIONS)('%s: exactly its profile’s operations with the job-request key, on that key only', (name) => {
    const key = { 'Fn::GetAtt': [idOf('AWS::KMS::Key', 'StorageJobRequestKey'), 'Arn'] };
    expect(pairs(name, 'kms')).toEqual((FUNCTION_PROFILES[name].jobRequestKey ?? []).map((op) => `kms:${op} ${JSON.stringify(key)}`).sort());
  });

  test.each(ALL_FUNCTIONS)('%s: signing keys only as its profile says, only on keys tagged with this stack; key creation only by the signing-keys function', (name) => {
    const statements = statementsOf(name).filter((s) => asArray(s.Action).some((a) => /^kms:(Sign|GetPublicKey|CreateKey|TagResource|ScheduleKeyDeletion)$/.test(a)));
    const wanted = FUNCTION_PROFILES[name].signingKeys ?? [];
    expect(statements.flatMap((s) => asArray(s.Action)).map((a) => a.replace('kms:', '')).sort()).toEqual([...wanted].sort());
    for (const statement of statements) {
      const condition = JSON.stringify(statement.Condition);
      expect(condition).toMatch(/"aws:(Resource|Request)Tag\/pdf-api:stack":"[^"]+"/);
    }
    expect(wanted.includes('CreateKey')).toBe(name === 'signingKeys');
  });

  /** What an SQS event source mapping calls on its queue, for the function it invokes. */
  const CONSUMER_ACTIONS = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:ReceiveMessage'];

  test('SQS: job sends to its failure queue, submitters send chunks (and the worker completions) to the bulk queue, each consumer reads only its queue; no other function touches SQS', () => {
    const queue = (prefix: string) => ({ 'Fn::GetAtt': [idOf('AWS::SQS::Queue', prefix), 'Arn'] });
    const sqsPairs = (name: string) => pairs(name, 'sqs');
    const on = (resource: unknown) => (action: string) => `${action} ${JSON.stringify(resource)}`;
    expect(sqsPairs('job')).toEqual(['sqs:SendMessage'].map(on(queue('JobFailures'))));
    // The bulk function queues a job's chunks; the reconcile function queues again those of a job whose submission died.
    expect(sqsPairs('bulk')).toEqual(['sqs:SendMessage'].map(on(queue('BulkQueue'))));
    // The bulk worker reads the bulk queue, and asks there for a job's completion once its last chunk is done.
    expect(sqsPairs('bulkWorker')).toEqual([...CONSUMER_ACTIONS, 'sqs:SendMessage'].map(on(queue('BulkQueue'))).sort());
    expect(sqsPairs('reconcile')).toEqual(
      [...CONSUMER_ACTIONS.map(on(queue('JobFailures'))), ...CONSUMER_ACTIONS.map(on(queue('BulkDeadLetters'))), ...['sqs:SendMessage'].map(on(queue('BulkQueue')))].sort(),
    );
    const touching = ALL_FUNCTIONS.filter((name) => grants(name, 'sqs').length > 0);
    expect(touching.sort()).toEqual(['bulk', 'bulkWorker', 'job', 'reconcile']);
  });

  test("the reconcile function reads the job function's failure queue and the bulk dead-letter queue at once; the bulk worker reads the bulk queue a chunk at a time", () => {
    const mappings = resourcesOfType(resources, 'AWS::Lambda::EventSourceMapping').map(([, mapping]) => mapping.Properties as Record<string, any>);
    const queueArn = (prefix: string) => ({ 'Fn::GetAtt': [idOf('AWS::SQS::Queue', prefix), 'Arn'] });
    expect(mappings).toHaveLength(3);
    expect(mappings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ FunctionName: { Ref: functionId('reconcile') }, EventSourceArn: queueArn('JobFailures'), FunctionResponseTypes: ['ReportBatchItemFailures'] }),
        expect.objectContaining({ FunctionName: { Ref: functionId('reconcile') }, EventSourceArn: queueArn('BulkDeadLetters'), FunctionResponseTypes: ['ReportBatchItemFailures'] }),
        // One chunk (ten lines) per invocation; the fleet bounded by MaximumConcurrency (context bulkMaximumConcurrency).
        expect.objectContaining({
          FunctionName: { Ref: functionId('bulkWorker') },
          EventSourceArn: queueArn('BulkQueue'),
          BatchSize: 1,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          ScalingConfig: { MaximumConcurrency: 100 },
        }),
      ]),
    );
    const queue = resources[idOf('AWS::SQS::Queue', 'JobFailures')]?.Properties as Record<string, any>;
    expect(queue.RedrivePolicy).toEqual({ deadLetterTargetArn: { 'Fn::GetAtt': [idOf('AWS::SQS::Queue', 'UnhandledJobFailures'), 'Arn'] }, maxReceiveCount: 5 });
    expect(queue.VisibilityTimeout).toBeGreaterThan((resources[functionId('reconcile')]?.Properties as Record<string, any>).Timeout);
    // A chunk every delivery failed goes to the dead-letter queue; a message delivered again after its
    // worker died comes back after the worker's timeout and its work's lease, so it finds the work free.
    const bulkQueue = resources[idOf('AWS::SQS::Queue', 'BulkQueue')]?.Properties as Record<string, any>;
    expect(bulkQueue.RedrivePolicy).toEqual({ deadLetterTargetArn: queueArn('BulkDeadLetters'), maxReceiveCount: BULK_MAX_RECEIVE_COUNT });
    expect(bulkQueue.VisibilityTimeout).toBe(BULK_QUEUE_VISIBILITY_TIMEOUT_SECONDS);
    expect(bulkQueue.VisibilityTimeout).toBeGreaterThan((resources[functionId('bulkWorker')]?.Properties as Record<string, any>).Timeout);
    expect(bulkQueue.VisibilityTimeout * 1000).toBeGreaterThan(HOLD_LEASE_MS);
    expect((resources[idOf('AWS::SQS::Queue', 'BulkDeadLetters')]?.Properties as Record<string, any>).VisibilityTimeout).toBeGreaterThan(
      (resources[functionId('reconcile')]?.Properties as Record<string, any>).Timeout,
    );
    expect(synthStack({ bulkMaximumConcurrency: '20' }).resources).toSatisfy((custom: Record<string, CfnResource>) =>
      resourcesOfType(custom, 'AWS::Lambda::EventSourceMapping').some(([, m]) => (m.Properties as any).ScalingConfig?.MaximumConcurrency === 20),
    );
  });

  test('each function invokes exactly the functions its profile names: render by batch and job, job by generate and batch', () => {
    const arn = (name: string) => ({ 'Fn::GetAtt': [functionId(name), 'Arn'] });
    const invoked = (name: string) => grants(name, 'lambda').flatMap((grant) => (expect(grant.actions).toEqual(['lambda:InvokeFunction']), grant.resources));
    expect(invoked('batch')).toEqual(expect.arrayContaining([arn('render'), arn('job')]));
    expect(invoked('batch')).toHaveLength(2);
    expect(invoked('job')).toEqual([arn('render')]);
    expect(invoked('generate')).toEqual([arn('job')]);
    for (const name of ALL_FUNCTIONS.filter((n) => !['batch', 'job', 'generate'].includes(n))) expect(grants(name, 'lambda')).toEqual([]);
  });

  test('the job function runs up to 15 minutes, retried twice by Lambda, events kept an hour, given-up ones to its failure queue', () => {
    const configs = resourcesOfType(resources, 'AWS::Lambda::EventInvokeConfig').map(([, config]) => config.Properties as Record<string, any>);
    expect(configs).toEqual([
      {
        FunctionName: { Ref: functionId('job') },
        Qualifier: '$LATEST',
        MaximumRetryAttempts: 2,
        MaximumEventAgeInSeconds: 3600,
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [idOf('AWS::SQS::Queue', 'JobFailures'), 'Arn'] } } },
      },
    ]);
    expect((resources[functionId('job')]?.Properties as Record<string, any>).Timeout).toBe(900);
  });

  test('no resource-based permission opens render to anyone; API Gateway may invoke only the API functions', () => {
    const permissions = resourcesOfType(resources, 'AWS::Lambda::Permission').map(([, p]) => p.Properties as Record<string, any>);
    const scheduled = permissions.filter((p) => p.Principal === 'events.amazonaws.com');
    const invoked = new Set(permissions.filter((p) => p.Principal !== 'events.amazonaws.com').map((p) => p.FunctionName['Fn::GetAtt'][0]));
    expect(invoked).not.toContain(functionId('render'));
    // EventBridge may invoke the scheduled functions, each from its one rule only.
    expect(scheduled.map((p) => p.FunctionName['Fn::GetAtt'][0]).sort()).toEqual([functionId('reconcile'), functionId('webhooks')].sort());
    for (const permission of scheduled) {
      const name = String(permission.FunctionName['Fn::GetAtt'][0]).replace(/Function$/, '');
      expect(JSON.stringify(permission.SourceArn)).toContain(`${name}Schedule`);
    }
    for (const permission of permissions.filter((p) => p.Principal !== 'events.amazonaws.com')) {
      expect(permission).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'apigateway.amazonaws.com' });
      // Scoped to this API's stage, not to any API in the account.
      expect(JSON.stringify(permission.SourceArn)).toContain(idOf('AWS::ApiGateway::RestApi', 'HttpApi'));
    }
    expect([...invoked].sort()).toEqual(API_FUNCTIONS.map(functionId).sort());
  });

  test('every role is assumable by Lambda only, except API Gateway’s logging role', () => {
    for (const [id, role] of resourcesOfType(resources, 'AWS::IAM::Role')) {
      const principal = role.Properties?.AssumeRolePolicyDocument.Statement[0].Principal.Service;
      expect(principal).toBe(id.startsWith('HttpApiCloudWatchRole') ? 'apigateway.amazonaws.com' : 'lambda.amazonaws.com');
    }
  });

  test('with tracing off there is no `*` resource at all but kms:CreateKey', () => {
    const { resources: untraced } = synthStack({ tracing: 'false' });
    for (const [, policy] of resourcesOfType(untraced, 'AWS::IAM::Policy')) {
      for (const statement of policy.Properties?.PolicyDocument.Statement as Statement[]) {
        // But kms:CreateKey, which names no resource (conditioned on the stack's tag: tested above).
        if (statement.Action !== 'kms:CreateKey') expect(asArray(statement.Resource)).not.toContain('*');
      }
    }
  });
});
