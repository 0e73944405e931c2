/**
 * Lambda concurrency is the deployment's choice: by default none is reserved or provisioned (a new
 * account, often limited to 10 concurrent executions, cannot reserve any), and each CDK context
 * switch puts its setting where it belongs, with everything that invokes a provisioned function
 * invoking its `live` alias (API Gateway for generate; batch and job for render) and allowed to
 * invoke that alias alone.
 */
import { describe, expect, test } from 'vitest';
import { API_FUNCTIONS, FUNCTION_PROFILES, INTERNAL_FUNCTIONS, ROUTES } from '#lib/api/routes.ts';
import { CONCURRENCY_SWITCHES, LIVE_ALIAS } from '../../cdk/constructs/concurrency.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { asArray, resourcesOfType, roleOf, statementsOfRole, synthStack, type CfnResource } from './stack-fixture.ts';

const ALL_FUNCTIONS = [...API_FUNCTIONS, ...INTERNAL_FUNCTIONS];
const CALLERS_OF_RENDER = ALL_FUNCTIONS.filter((name) => FUNCTION_PROFILES[name].invokes?.includes('render'));

const propertiesOf = (resources: Record<string, CfnResource>, id: string) => resources[id]!.Properties as Record<string, any>;

/** The aliases of the template, by the logical id of the function each belongs to. */
function aliasesByFunction(resources: Record<string, CfnResource>): Map<string, { id: string; properties: Record<string, any> }> {
  return new Map(
    resourcesOfType(resources, 'AWS::Lambda::Alias').map(([id, alias]) => [alias.Properties!.FunctionName.Ref as string, { id, properties: alias.Properties! }]),
  );
}

/** What a function's role may invoke (lambda:InvokeFunction resources). */
const invokeGrants = (resources: Record<string, CfnResource>, name: string) =>
  statementsOfRole(resources, roleOf(resources, functionId(name)))
    .filter((s) => asArray(s.Action).includes('lambda:InvokeFunction'))
    .flatMap((s) => asArray(s.Resource));

/** The function or alias each API Gateway method's Lambda proxy integration calls, by method. */
function integrationTargets(resources: Record<string, CfnResource>): unknown[] {
  return resourcesOfType(resources, 'AWS::ApiGateway::Method').map(([, method]) => {
    // arn:<partition>:apigateway:<region>:lambda:path/2015-03-31/functions/<target>/invocations
    const parts: unknown[] = method.Properties!.Integration.Uri['Fn::Join'][1];
    return parts.find((part) => typeof part === 'object' && !String((part as { Ref?: string }).Ref).startsWith('AWS::'));
  });
}

const apiPermissions = (resources: Record<string, CfnResource>) =>
  resourcesOfType(resources, 'AWS::Lambda::Permission')
    .map(([, p]) => p.Properties as Record<string, any>)
    .filter((p) => p.Principal === 'apigateway.amazonaws.com');

describe('Lambda concurrency: none by default', () => {
  const { resources } = synthStack();

  test('no function has reserved concurrency, and nothing is provisioned: no version, no alias, no ProvisionedConcurrencyConfig', () => {
    for (const name of ALL_FUNCTIONS) expect(propertiesOf(resources, functionId(name)).ReservedConcurrentExecutions, name).toBeUndefined();
    expect(resourcesOfType(resources, 'AWS::Lambda::Version')).toEqual([]);
    expect(resourcesOfType(resources, 'AWS::Lambda::Alias')).toEqual([]);
    expect(JSON.stringify(resources)).not.toMatch(/ReservedConcurrentExecutions|ProvisionedConcurrencyConfig/);
  });

  test('callers invoke the functions themselves, by name, and API Gateway integrates the functions', () => {
    for (const name of CALLERS_OF_RENDER) {
      expect(propertiesOf(resources, functionId(name)).Environment.Variables.RENDER_FUNCTION_NAME).toEqual({ Ref: functionId('render') });
      expect(invokeGrants(resources, name)).toContainEqual({ 'Fn::GetAtt': [functionId('render'), 'Arn'] });
    }
    for (const target of integrationTargets(resources)) expect(target).toMatchObject({ 'Fn::GetAtt': [expect.stringMatching(/Function$/), 'Arn'] });
  });
});

describe('renderReservedConcurrency', () => {
  const { resources } = synthStack({ renderReservedConcurrency: '20' });

  test('reserves it on the render function alone, provisions nothing', () => {
    for (const name of ALL_FUNCTIONS) {
      expect(propertiesOf(resources, functionId(name)).ReservedConcurrentExecutions, name).toBe(name === 'render' ? 20 : undefined);
    }
    expect(resourcesOfType(resources, 'AWS::Lambda::Alias')).toEqual([]);
    expect(JSON.stringify(resources)).not.toContain('ProvisionedConcurrencyConfig');
  });

  test('callers still invoke the function itself', () => {
    for (const name of CALLERS_OF_RENDER) {
      expect(propertiesOf(resources, functionId(name)).Environment.Variables.RENDER_FUNCTION_NAME).toEqual({ Ref: functionId('render') });
    }
  });
});

describe('generateProvisionedConcurrency', () => {
  const { resources } = synthStack({ generateProvisionedConcurrency: 2 });
  const alias = () => aliasesByFunction(resources).get(functionId('generate'))!;

  test('provisions it on a `live` alias of a published version of generate, and nothing else', () => {
    expect([...aliasesByFunction(resources).keys()]).toEqual([functionId('generate')]);
    const { properties } = alias();
    expect(properties).toMatchObject({ Name: LIVE_ALIAS, ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 2 } });
    const [versionId] = properties.FunctionVersion['Fn::GetAtt'] as [string, string];
    expect(resources[versionId]).toMatchObject({ Type: 'AWS::Lambda::Version', Properties: { FunctionName: { Ref: functionId('generate') } } });
    for (const name of ALL_FUNCTIONS) expect(propertiesOf(resources, functionId(name)).ReservedConcurrentExecutions, name).toBeUndefined();
  });

  test("API Gateway integrates generate's routes with the alias, and may invoke the alias, not the unqualified function", () => {
    const generateRoutes = ROUTES.filter((route) => route.handler === 'generate');
    const targets = integrationTargets(resources);
    expect(targets.filter((target) => JSON.stringify(target) === JSON.stringify({ Ref: alias().id }))).toHaveLength(generateRoutes.length);
    expect(JSON.stringify(targets)).not.toContain(`"${functionId('generate')}"`);
    const permissions = apiPermissions(resources);
    expect(permissions.filter((p) => JSON.stringify(p.FunctionName) === JSON.stringify({ Ref: alias().id }))).toHaveLength(generateRoutes.length);
    expect(permissions.filter((p) => JSON.stringify(p.FunctionName).includes(`"${functionId('generate')}"`))).toEqual([]);
    for (const permission of permissions) expect(permission).toMatchObject({ Action: 'lambda:InvokeFunction' });
  });
});

describe('renderProvisionedConcurrency', () => {
  const { resources } = synthStack({ renderProvisionedConcurrency: '3' });
  const alias = () => aliasesByFunction(resources).get(functionId('render'))!;

  test('provisions it on a `live` alias of a published version of render', () => {
    expect([...aliasesByFunction(resources).keys()]).toEqual([functionId('render')]);
    expect(alias().properties).toMatchObject({ Name: LIVE_ALIAS, ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 3 } });
  });

  test.each(CALLERS_OF_RENDER)('%s invokes the alias (RENDER_FUNCTION_NAME is its ARN) and may invoke that alias alone', (name) => {
    expect(propertiesOf(resources, functionId(name)).Environment.Variables.RENDER_FUNCTION_NAME).toEqual({ Ref: alias().id });
    const grants = invokeGrants(resources, name);
    expect(grants).toContainEqual({ Ref: alias().id });
    expect(JSON.stringify(grants)).not.toContain(`"${functionId('render')}"`);
    // Its other targets (the job function) are untouched.
    for (const target of FUNCTION_PROFILES[name].invokes!.filter((t) => t !== 'render')) {
      expect(grants).toContainEqual({ 'Fn::GetAtt': [functionId(target), 'Arn'] });
    }
    expect(grants).toHaveLength(FUNCTION_PROFILES[name].invokes!.length);
  });

  test('the render alias is open to no one else: no resource-based permission on it or on render', () => {
    for (const permission of resourcesOfType(resources, 'AWS::Lambda::Permission').map(([, p]) => JSON.stringify(p.Properties!.FunctionName))) {
      expect(permission).not.toContain(alias().id);
      expect(permission).not.toContain(`"${functionId('render')}"`);
    }
  });
});

describe('all three switches together', () => {
  const { resources } = synthStack({ renderReservedConcurrency: '10', renderProvisionedConcurrency: '10', generateProvisionedConcurrency: '1' });

  test('each setting where it belongs', () => {
    expect(propertiesOf(resources, functionId('render')).ReservedConcurrentExecutions).toBe(10);
    const aliases = aliasesByFunction(resources);
    expect(aliases.get(functionId('render'))!.properties.ProvisionedConcurrencyConfig).toEqual({ ProvisionedConcurrentExecutions: 10 });
    expect(aliases.get(functionId('generate'))!.properties.ProvisionedConcurrencyConfig).toEqual({ ProvisionedConcurrentExecutions: 1 });
    expect(aliases.size).toBe(2);
  });
});

describe('the switches are checked at synth', () => {
  test.each(Object.keys(CONCURRENCY_SWITCHES))('%s must be a positive whole number', (name) => {
    for (const value of ['0', '-1', '1.5', 'ten', '', true, 0, 2.5, '1e3']) {
      expect(() => synthStack({ [name]: value }), JSON.stringify(value)).toThrow(new RegExp(`Context ${name} must be a positive whole number`));
    }
  });

  test('provisioned concurrency beyond the reserved concurrency is refused, as Lambda would refuse it', () => {
    expect(() => synthStack({ renderReservedConcurrency: '5', renderProvisionedConcurrency: '6' })).toThrow(
      /render function's provisioned concurrency \(6\) cannot exceed its reserved concurrency \(5\)/,
    );
  });
});
