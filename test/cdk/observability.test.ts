/**
 * What an operator sees: JSON access logs, X-Ray when switched on, EMF-ready Powertools settings,
 * stage throttling as a backstop, and alarms on the 5xx rate, crashes and render errors.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { API_FUNCTIONS, FUNCTION_PROFILES, INTERNAL_FUNCTIONS } from '#lib/api/routes.ts';
import { TIERS } from '#lib/accounts/tiers.ts';
import { MAX_5XX_PERCENT, MIN_REQUESTS_FOR_5XX_RATE, RENDER_ERRORS_THRESHOLD } from '../../cdk/constructs/alarms.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { METRICS_NAMESPACE } from '../../cdk/stack.ts';
import { resourcesOfType, synthStack, type CfnResource } from './stack-fixture.ts';

const ALL_FUNCTIONS = [...API_FUNCTIONS, ...INTERNAL_FUNCTIONS];

describe('observability', () => {
  let resources: Record<string, CfnResource>;
  const stage = (from = resources) => resourcesOfType(from, 'AWS::ApiGateway::Stage')[0]![1].Properties as Record<string, any>;
  const alarms = (): Record<string, any>[] => resourcesOfType(resources, 'AWS::CloudWatch::Alarm').map(([id, a]) => ({ id, ...a.Properties }));

  beforeAll(() => {
    ({ resources } = synthStack());
  });

  test('API Gateway writes one JSON access log line per request, without query strings or headers', () => {
    const { AccessLogSetting } = stage();
    const format = AccessLogSetting.Format as string;
    const line = JSON.parse(format);
    expect(line).toMatchObject({ requestId: '$context.requestId', status: '$context.status', path: '$context.path', integrationLatency: '$context.integrationLatency' });
    // A download link's signature travels in the query string; the API key in a header.
    expect(format).not.toMatch(/querystring|header|authorizer/i);
    const logGroupId = resourcesOfType(resources, 'AWS::Logs::LogGroup').find(([id]) => id.startsWith('HttpAccessLogs'))![0];
    expect(JSON.stringify(AccessLogSetting.DestinationArn)).toContain(`{"Ref":"${logGroupId}"}`);
  });

  test('X-Ray traces the stage and every function by default, and nothing with -c tracing=false', () => {
    expect(stage().TracingEnabled).toBe(true);
    for (const name of ALL_FUNCTIONS) expect((resources[functionId(name)]?.Properties as any).TracingConfig).toEqual({ Mode: 'Active' });
    const { resources: untraced } = synthStack({ tracing: 'false' });
    expect(stage(untraced).TracingEnabled).toBe(false);
    for (const name of ALL_FUNCTIONS) expect((untraced[functionId(name)]?.Properties as any).TracingConfig).toBeUndefined();
  });

  test('every function logs through Powertools with its EMF metrics namespace set', () => {
    for (const name of ALL_FUNCTIONS) {
      expect((resources[functionId(name)]?.Properties as any).Environment.Variables).toMatchObject({
        POWERTOOLS_SERVICE_NAME: 'pdf-api',
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      });
    }
  });

  test('stage throttling sits well above every per-key limit, and can be raised by context', () => {
    const [settings] = stage().MethodSettings;
    const busiestKeyPerSecond = Math.max(...Object.values(TIERS).map((t) => t.rateLimitPerMinute)) / 60;
    expect(settings).toMatchObject({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
    expect(settings.ThrottlingRateLimit).toBeGreaterThan(busiestKeyPerSecond * 5);
    const [raised] = stage(synthStack({ throttleRate: '500', throttleBurst: '1000' }).resources).MethodSettings;
    expect(raised).toMatchObject({ ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 });
  });

  test('an alarm on the API’s 5xx rate, ignoring periods with too few requests to judge', () => {
    const alarm = alarms().find((a) => a.id.startsWith('AlarmsApi5xxRate'))!;
    expect(alarm).toMatchObject({ Threshold: MAX_5XX_PERCENT, ComparisonOperator: 'GreaterThanThreshold', TreatMissingData: 'notBreaching' });
    const expression = alarm.Metrics.find((m: any) => m.Expression);
    expect(expression.Expression).toBe(`IF(requests >= ${MIN_REQUESTS_FOR_5XX_RATE}, 100 * errors / requests, 0)`);
    const metricNames = alarm.Metrics.filter((m: any) => m.MetricStat).map((m: any) => `${m.Id}:${m.MetricStat.Metric.MetricName}`);
    expect(metricNames.sort()).toEqual(['errors:5XXError', 'requests:Count']);
  });

  test('an alarm per function on Lambda errors (crashes, timeouts, out of memory)', () => {
    for (const name of ALL_FUNCTIONS) {
      const alarm = alarms().find((a) => a.MetricName === 'Errors' && a.Dimensions?.[0]?.Value?.Ref === functionId(name));
      expect(alarm, name).toMatchObject({ Namespace: 'AWS/Lambda', Statistic: 'Sum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    }
  });

  test('render errors logged by the Chromium functions are counted and alarmed on', () => {
    const chromiumLogGroups = ALL_FUNCTIONS.filter((n) => FUNCTION_PROFILES[n].chromium).map(
      (n) => (resources[functionId(n)]?.Properties as any).LoggingConfig.LogGroup.Ref as string,
    );
    const filters = resourcesOfType(resources, 'AWS::Logs::MetricFilter').map(([, f]) => f.Properties as Record<string, any>);
    expect(filters.map((f) => f.LogGroupName.Ref).sort()).toEqual(chromiumLogGroups.sort());
    for (const filter of filters) {
      expect(filter.FilterPattern).toBe('{ $.level = "ERROR" }');
      expect(filter.MetricTransformations).toEqual([{ MetricNamespace: METRICS_NAMESPACE, MetricName: 'RenderErrors', MetricValue: '1' }]);
    }
    const alarm = alarms().find((a) => a.MetricName === 'RenderErrors')!;
    expect(alarm).toMatchObject({ Namespace: METRICS_NAMESPACE, Threshold: RENDER_ERRORS_THRESHOLD });
  });

  test('every alarm notifies the alarm topic, which only accepts TLS; -c alarmEmail subscribes someone', () => {
    const topicId = resourcesOfType(resources, 'AWS::SNS::Topic')[0]![0];
    for (const alarm of alarms()) {
      expect(alarm.AlarmActions).toEqual([{ Ref: topicId }]);
      expect(alarm.OKActions).toEqual([{ Ref: topicId }]);
    }
    const policy = resourcesOfType(resources, 'AWS::SNS::TopicPolicy')[0]![1].Properties as any;
    expect(policy.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
    const { template } = synthStack({ alarmEmail: 'ops@example.com' });
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
    expect(resourcesOfType(resources, 'AWS::SNS::Subscription')).toEqual([]);
  });

  test('an alarm when a bulk chunk fails every delivery and lands in the bulk dead-letter queue', () => {
    const queueName = { 'Fn::GetAtt': [resourcesOfType(resources, 'AWS::SQS::Queue').find(([id]) => id.startsWith('BulkDeadLetters'))![0], 'QueueName'] };
    const alarm = alarms().find((a) => a.id.startsWith('AlarmsBulkChunksGivenUp'))!;
    expect(alarm).toMatchObject({ Namespace: 'AWS/SQS', MetricName: 'NumberOfMessagesReceived', Statistic: 'Sum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(alarm.Dimensions).toEqual([{ Name: 'QueueName', Value: queueName }]);
  });

  test('outputs the API URL, the tables’ and bucket’s names, the secret’s ARN, the alarm topic, and what the functions invoke, seal with and queue on', () => {
    const { template } = synthStack();
    const outputs = template.toJSON().Outputs as Record<string, unknown>;
    expect(Object.keys(outputs).sort()).toEqual([
      'AlarmTopicArn',
      'ApiUrl',
      'BucketName',
      'BulkQueueUrl',
      'IdempotencyTableName',
      'JobFunctionName',
      'JobRequestKeyArn',
      'LinkSigningSecretArn',
      'RenderFunctionName',
      'TableName',
    ]);
  });
});
