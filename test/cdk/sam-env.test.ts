/**
 * `npm run sam-env` (bin/sam-env.ts) writes env.json for `sam local invoke` from a deployed stack's
 * outputs: every reference in every function's environment must be an output, whatever switches the
 * stack is synthesized with, or a function would start under SAM without its table, queue or key.
 */
import { describe, expect, it } from 'vitest';
import { functionEnvironments, samEnvironment, unresolvable } from '../../bin/sam-env.ts';
import { synthesizedTemplate } from '../../cdk/template.ts';

const plain = synthesizedTemplate();
/** What CloudFormation would answer for each output: a value that names it, to see which one landed where. */
const deployed = (template = plain) => Object.fromEntries(Object.keys(template.Outputs ?? {}).map((name) => [name, `deployed-${name}`]));

describe('env.json for sam local invoke', () => {
  it.each([
    ['no switch', {}],
    ['provisioned render and generate (callers invoke the live alias)', { renderProvisionedConcurrency: 2, generateProvisionedConcurrency: 1 }],
  ])('every non-literal variable of every function is an output of the stack, with %s', (_name, context) => {
    expect(unresolvable(synthesizedTemplate(context))).toEqual([]);
  });

  it('gives every function every variable of its environment, each with its deployed value', () => {
    // Act
    const environment = samEnvironment(plain, deployed());

    // Assess: the functions and variables are the template's own, none left empty.
    const template = functionEnvironments(plain);
    expect(Object.keys(environment).sort()).toEqual(Object.keys(template).sort());
    for (const [id, variables] of Object.entries(environment)) {
      expect(Object.keys(variables).sort(), id).toEqual(Object.keys(template[id]!).sort());
      expect(Object.entries(variables).filter(([, value]) => value === '').map(([name]) => name), id).toEqual([]);
    }
    // What the issue found missing, and the names every function takes.
    expect(environment.GenerateFunction).toMatchObject({
      JOB_FUNCTION_NAME: 'deployed-JobFunctionName',
      JOB_REQUEST_KEY_ARN: 'deployed-JobRequestKeyArn',
      TABLE_NAME: 'deployed-TableName',
      BUCKET_NAME: 'deployed-BucketName',
      IDEMPOTENCY_TABLE_NAME: 'deployed-IdempotencyTableName',
      LINK_SIGNING_SECRET_ARN: 'deployed-LinkSigningSecretArn',
      RENDER_TIMEOUT_MS: '20000',
    });
    expect(environment.BatchFunction).toMatchObject({ RENDER_FUNCTION_NAME: 'deployed-RenderFunctionName', JOB_FUNCTION_NAME: 'deployed-JobFunctionName' });
    expect(environment.BulkWorkerFunction).toMatchObject({ BULK_QUEUE_URL: 'deployed-BulkQueueUrl', JOB_REQUEST_KEY_ARN: 'deployed-JobRequestKeyArn' });
  });

  it('refuses outputs that lack one, naming the output and the variable it gives', () => {
    const { JobRequestKeyArn: _dropped, ...older } = deployed();
    expect(() => samEnvironment(plain, older)).toThrow(/lack JobRequestKeyArn \(JOB_REQUEST_KEY_ARN\): deploy/);
  });
});
