/**
 * One Lambda function per function name of lib/api/routes.ts, each sized, configured and wired as
 * its profile says.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { API_FUNCTIONS, FUNCTION_PROFILES, INTERNAL_FUNCTIONS } from '#lib/api/routes.ts';
import { settings } from '#lib/settings.ts';
import { BULK_WORKER_TIMEOUT_SECONDS } from '#lib/bulk/bulk-records.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { API_GATEWAY_TIMEOUT, SERVICE_NAME, METRICS_NAMESPACE } from '../../cdk/stack.ts';
import { resourcesOfType, synthStack, type CfnResource } from './stack-fixture.ts';

const ALL_FUNCTIONS = [...API_FUNCTIONS, ...INTERNAL_FUNCTIONS];
const ref = (resources: Record<string, CfnResource>, type: string, idPrefix: string) => {
  const found = resourcesOfType(resources, type).filter(([id]) => id.startsWith(idPrefix));
  expect(found).toHaveLength(1);
  return { Ref: found[0]![0] };
};

describe('Lambda functions', () => {
  let resources: Record<string, CfnResource>;
  const fn = (name: string) => resources[functionId(name)]?.Properties as Record<string, any>;

  beforeAll(() => {
    ({ resources } = synthStack());
  });

  test('one function per name in API_FUNCTIONS and INTERNAL_FUNCTIONS, and no other', () => {
    const ids = resourcesOfType(resources, 'AWS::Lambda::Function').map(([id]) => id);
    expect(ids.sort()).toEqual(ALL_FUNCTIONS.map(functionId).sort());
  });

  test.each(ALL_FUNCTIONS)('%s: Node 24 on x86_64, ES module bundle, its own log group', (name) => {
    expect(fn(name)).toMatchObject({
      Runtime: 'nodejs24.x',
      Architectures: ['x86_64'],
      Handler: 'index.handler',
      Description: `PDF API: functions/${name}.ts`,
      LoggingConfig: { LogGroup: { Ref: expect.stringMatching(new RegExp(`^${functionId(name)}Logs`)) } },
    });
  });

  test.each(ALL_FUNCTIONS.filter((name) => FUNCTION_PROFILES[name].chromium))(
    '%s runs Chromium: the layer, at least 1600 MB, 1 GB of /tmp',
    (name) => {
      const layer = ref(resources, 'AWS::Lambda::LayerVersion', 'Chromium');
      expect(fn(name).Layers).toEqual([layer]);
      expect(fn(name).MemorySize).toBeGreaterThanOrEqual(1600);
      expect(fn(name).EphemeralStorage).toEqual({ Size: 1024 });
    },
  );

  test.each(ALL_FUNCTIONS.filter((name) => !FUNCTION_PROFILES[name].chromium))('%s does not run Chromium: no layer, small unless its profile asks for CPU', (name) => {
    expect(fn(name).Layers).toBeUndefined();
    if (FUNCTION_PROFILES[name].memoryMb) expect(fn(name).MemorySize).toBe(FUNCTION_PROFILES[name].memoryMb);
    else expect(fn(name).MemorySize).toBeLessThan(1600);
  });

  test('the bulk function checks a whole upload on a whole vCPU within the API’s answer; the bulk worker has the 15 minutes its chunk lease and the queue’s visibility are sized from', () => {
    expect(fn('bulk')).toMatchObject({ MemorySize: 1769, Timeout: 28 });
    expect(fn('bulkWorker').Timeout).toBe(BULK_WORKER_TIMEOUT_SECONDS);
    expect(BULK_WORKER_TIMEOUT_SECONDS).toBe(900);
  });

  test('the functions that send to the bulk queue (bulk and reconcile its chunks, the worker its completions) find it by BULK_QUEUE_URL; nothing else does', () => {
    const queue = ref(resources, 'AWS::SQS::Queue', 'BulkQueue');
    const senders = ALL_FUNCTIONS.filter((name) => FUNCTION_PROFILES[name].sendsBulkChunks);
    expect(senders.sort()).toEqual(['bulk', 'bulkWorker', 'reconcile']);
    for (const name of ALL_FUNCTIONS) {
      if (senders.includes(name)) expect(fn(name).Environment.Variables.BULK_QUEUE_URL, name).toEqual(queue);
      else expect(fn(name).Environment.Variables, name).not.toHaveProperty('BULK_QUEUE_URL');
    }
  });

  test('the Chromium layer is built for the same runtime and architecture', () => {
    const [[, layer]] = resourcesOfType(resources, 'AWS::Lambda::LayerVersion') as [[string, CfnResource]];
    expect(layer.Properties).toMatchObject({ CompatibleRuntimes: ['nodejs24.x'], CompatibleArchitectures: ['x86_64'] });
  });

  test.each(API_FUNCTIONS)('%s answers API Gateway, so it stops inside the 29 s integration limit', (name) => {
    expect(fn(name).Timeout).toBeLessThan(API_GATEWAY_TIMEOUT.toSeconds());
  });

  test('the render and job functions outlive the longest render they are allowed: a batch job item’s, 14 minutes', () => {
    for (const name of ['render', 'job']) {
      expect(fn(name).Timeout).toBe(900);
      expect(fn(name).Timeout * 1000).toBeGreaterThan(settings.jobRenderTimeoutMs + 30_000);
      expect(fn(name).Timeout * 1000).toBeGreaterThan(Number(fn(name).Environment.Variables.RENDER_TIMEOUT_MS));
    }
  });

  test('the scheduled functions that wait for webhook receivers outlast one try, and end before their next run', () => {
    expect(fn('webhooks').Timeout * 1000).toBeGreaterThan(settings.webhookTimeoutMs + 5_000);
    expect(fn('webhooks').Timeout).toBeLessThan(60); // every minute: one round at a time
    expect(fn('reconcile').Timeout * 1000).toBeGreaterThan(settings.webhookTimeoutMs + 5_000);
  });

  test('functions that render or wait for renders get the long API timeout; the rest a short one', () => {
    expect(fn('generate').Timeout).toBe(28);
    expect(fn('batch').Timeout).toBe(28);
    expect(fn('preview').Timeout).toBe(28);
    expect(fn('bulk').Timeout).toBe(28);
    for (const name of ['health', 'fallback', 'files', 'pdfs', 'usage', 'templates', 'uploads']) expect(fn(name).Timeout).toBeLessThanOrEqual(10);
  });

  test.each(ALL_FUNCTIONS)('%s gets the table, the bucket, the render timeout and Powertools settings', (name) => {
    const variables = fn(name).Environment.Variables;
    expect(variables).toMatchObject({
      TABLE_NAME: ref(resources, 'AWS::DynamoDB::Table', 'StorageTable'),
      BUCKET_NAME: ref(resources, 'AWS::S3::Bucket', 'StoragePdfs'),
      RENDER_TIMEOUT_MS: '20000',
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      POWERTOOLS_LOG_LEVEL: 'INFO',
    });
    // The secret's value never appears in a function's configuration; only its ARN, where needed.
    expect(variables).not.toHaveProperty('LINK_SIGNING_SECRET');
    if (FUNCTION_PROFILES[name].linkSecret) {
      expect(variables.LINK_SIGNING_SECRET_ARN).toEqual(ref(resources, 'AWS::SecretsManager::Secret', 'StorageLinkSigningSecret'));
    } else {
      expect(variables).not.toHaveProperty('LINK_SIGNING_SECRET_ARN');
    }
  });

  test('batch and job find the render function by name, generate and batch the job function; nothing else does', () => {
    const callers = { RENDER_FUNCTION_NAME: ['batch', 'job'], JOB_FUNCTION_NAME: ['generate', 'batch'] };
    for (const [variable, names] of Object.entries(callers)) {
      const target = variable === 'RENDER_FUNCTION_NAME' ? 'render' : 'job';
      for (const name of names) expect(fn(name).Environment.Variables[variable]).toEqual({ Ref: functionId(target) });
      for (const name of ALL_FUNCTIONS.filter((n) => !names.includes(n))) expect(fn(name).Environment.Variables).not.toHaveProperty(variable);
    }
  });

  test('context switches: renderTimeoutMs reaches every function; too long is refused', () => {
    const { resources: custom } = synthStack({ renderTimeoutMs: '15000' });
    const render = custom[functionId('render')]?.Properties as Record<string, any>;
    expect(render.Environment.Variables.RENDER_TIMEOUT_MS).toBe('15000');
    expect(render.Timeout).toBe(900);
    expect(() => synthStack({ renderTimeoutMs: '25000' })).toThrow(/renderTimeoutMs/);
    expect(() => synthStack({ deletionProtection: 'maybe' })).toThrow(/deletionProtection/);
  });

  test('publicBaseUrl, when given, reaches every function as PUBLIC_BASE_URL', () => {
    const { resources: custom } = synthStack({ publicBaseUrl: 'https://pdf.example.com' });
    for (const name of ALL_FUNCTIONS) {
      expect((custom[functionId(name)]?.Properties as any).Environment.Variables.PUBLIC_BASE_URL).toBe('https://pdf.example.com');
    }
    expect(fn('generate').Environment.Variables).not.toHaveProperty('PUBLIC_BASE_URL');
  });
});
