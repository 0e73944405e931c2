/**
 * The deployed API's routes are the routes table's: every route a method on its resource, wired
 * to its function; everything else reaches the fallback function or answers in the API's error shape.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { FALLBACK_HANDLER, ROUTES } from '#lib/api/routes.ts';
import { GATEWAY_ANSWERS, resourcePaths, STAGE_NAME } from '../../cdk/constructs/rest-api.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { resourcesOfType, synthStack, type CfnResource } from './stack-fixture.ts';

interface DeployedMethod {
  readonly method: string;
  readonly path: string;
  /** Logical id of the integrated function. */
  readonly target: string;
  readonly integrationType: string;
  readonly authorization: string;
}

/** Every method of the template with its full resource path and its Lambda proxy target. */
function deployedMethods(resources: Record<string, CfnResource>): DeployedMethod[] {
  const parents = new Map<string, { parent: unknown; part: string }>();
  for (const [id, resource] of resourcesOfType(resources, 'AWS::ApiGateway::Resource')) {
    parents.set(id, { parent: resource.Properties?.ParentId, part: resource.Properties?.PathPart });
  }
  const pathOf = (ref: any): string => {
    if (ref?.['Fn::GetAtt']?.[1] === 'RootResourceId') return '';
    const entry = parents.get(ref?.Ref);
    if (!entry) throw new Error(`unknown resource ${JSON.stringify(ref)}`);
    return `${pathOf(entry.parent)}/${entry.part}`;
  };
  return resourcesOfType(resources, 'AWS::ApiGateway::Method').map(([, resource]) => {
    const properties = resource.Properties as Record<string, any>;
    const uriParts: any[] = properties.Integration.Uri['Fn::Join'][1];
    const target = uriParts.find((part) => part?.['Fn::GetAtt']?.[1] === 'Arn')['Fn::GetAtt'][0];
    return {
      method: properties.HttpMethod,
      path: pathOf(properties.ResourceId) || '/',
      target,
      integrationType: properties.Integration.Type,
      authorization: properties.AuthorizationType,
    };
  });
}

describe('REST API from lib/api/routes.ts', () => {
  let resources: Record<string, CfnResource>;
  let methods: DeployedMethod[];

  beforeAll(() => {
    ({ resources } = synthStack());
    methods = deployedMethods(resources);
  });

  test('every route is a method on its path, integrated (Lambda proxy) with its own function', () => {
    for (const route of ROUTES) {
      expect(methods).toContainEqual({
        method: route.method,
        path: route.path,
        target: functionId(route.handler),
        integrationType: 'AWS_PROXY',
        authorization: 'NONE',
      });
    }
  });

  test('the tree has exactly the routes’ resources, plus the greedy /{proxy+}', () => {
    const paths = [...new Set(methods.map((m) => m.path))].sort();
    expect(paths).toEqual([...resourcePaths(), '/{proxy+}'].sort());
    expect(resourcePaths()).toEqual(expect.arrayContaining(['/', '/v1', '/v1/pdf', ...ROUTES.map((r) => r.path)]));
  });

  test('every resource sends other methods to the fallback function (405 or 404 in the API’s shape)', () => {
    for (const path of [...resourcePaths(), '/{proxy+}']) {
      expect(methods).toContainEqual(expect.objectContaining({ method: 'ANY', path, target: functionId(FALLBACK_HANDLER) }));
    }
  });

  test('there is no method beyond the routes and the fallback', () => {
    const routed = methods.filter((m) => m.method !== 'ANY');
    expect(routed.map((m) => `${m.method} ${m.path}`).sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    expect(methods.filter((m) => m.method === 'ANY').every((m) => m.target === functionId(FALLBACK_HANDLER))).toBe(true);
  });

  test('API Gateway’s own refusals answer in the API’s error shape', () => {
    const answers = resourcesOfType(resources, 'AWS::ApiGateway::GatewayResponse').map(([, r]) => r.Properties as Record<string, any>);
    expect(answers.map((a) => a.ResponseType).sort()).toEqual(GATEWAY_ANSWERS.map((a) => a.type.responseType).sort());
    for (const answer of answers) {
      const template = answer.ResponseTemplates['application/json'] as string;
      // What API Gateway renders: $context variables are strings (messageString is a JSON string).
      const rendered = template.replace('$context.error.messageString', '"Missing Authentication Token"').replaceAll('$context.requestId', 'req-1');
      const body = JSON.parse(rendered);
      expect(Object.keys(body)).toEqual(['error']);
      expect(body.error).toEqual(expect.objectContaining({ code: expect.any(String), message: expect.any(String) }));
    }
    const byType = Object.fromEntries(answers.map((a) => [a.ResponseType, a]));
    expect(byType.MISSING_AUTHENTICATION_TOKEN).toMatchObject({ StatusCode: '404' });
    expect(byType.THROTTLED).toMatchObject({ StatusCode: '429', ResponseParameters: { 'gatewayresponse.header.Retry-After': "'1'" } });
    expect(byType.REQUEST_TOO_LARGE).toMatchObject({ StatusCode: '413' });
    expect(JSON.parse(byType.THROTTLED.ResponseTemplates['application/json']).error.code).toBe('rate_limit_exceeded');
  });

  test('a function Lambda would not run (throttled: INTEGRATION_FAILURE) is 503 service_busy with Retry-After, not a 500', () => {
    const answers = resourcesOfType(resources, 'AWS::ApiGateway::GatewayResponse').map(([, r]) => r.Properties as Record<string, any>);
    const failure = answers.find((a) => a.ResponseType === 'INTEGRATION_FAILURE')!;
    expect(failure).toMatchObject({
      StatusCode: '503',
      ResponseParameters: { 'gatewayresponse.header.Retry-After': "'2'", 'gatewayresponse.header.Cache-Control': "'no-store'" },
    });
    // The body the functions' own 503 carries (lib/api/errors.ts serviceBusy): code, message, retry_after, request_id.
    const body = JSON.parse((failure.ResponseTemplates['application/json'] as string).replaceAll('$context.requestId', 'req-1'));
    expect(body).toEqual({ error: { code: 'service_busy', message: expect.stringMatching(/busy.*Nothing was charged; retry in 2 s\.$/), retry_after: 2, request_id: 'req-1' } });
    // Everything else of the 5xx kind still answers render_failed.
    expect(JSON.parse(answers.find((a) => a.ResponseType === 'DEFAULT_5XX')!.ResponseTemplates['application/json'].replace('$context.requestId', 'r')).error.code).toBe('render_failed');
  });

  test('the stage is regional, named, deployed, and logged without bodies', () => {
    const [[, api]] = resourcesOfType(resources, 'AWS::ApiGateway::RestApi') as [[string, CfnResource]];
    expect(api.Properties?.EndpointConfiguration).toEqual({ Types: ['REGIONAL'] });
    const [[, stage]] = resourcesOfType(resources, 'AWS::ApiGateway::Stage') as [[string, CfnResource]];
    expect(stage.Properties?.StageName).toBe(STAGE_NAME);
    expect(stage.Properties?.MethodSettings).toEqual([
      expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR', DataTraceEnabled: false }),
    ]);
  });
});
