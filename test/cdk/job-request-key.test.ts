/**
 * The KMS key that seals job requests (lib/jobs/request-sealing.ts): customer-managed and rotated;
 * the functions that submit jobs may only encrypt with it (generate, batch, and bulk for a bulk
 * job's shared options), the functions that run them alone may decrypt (job, and the bulk worker), and
 * the account itself may administer the key but not use it, so no other role's IAM policy can open
 * a job's request (a key policy without the account's kms:* is the only thing that can say so).
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { API_FUNCTIONS, FUNCTION_PROFILES, INTERNAL_FUNCTIONS } from '#lib/api/routes.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { asArray, resourcesOfType, roleOf, statementsOfRole, synthStack, type CfnResource } from './stack-fixture.ts';

const ALL_FUNCTIONS = [...API_FUNCTIONS, ...INTERNAL_FUNCTIONS];
/** What uses a key's material, or hands out its use: none of it may go to anyone not named here. */
const USES = /^kms:(Encrypt|Decrypt|ReEncrypt.*|GenerateDataKey.*|CreateGrant|Sign|Verify|GenerateMac|VerifyMac|DeriveSharedSecret|\*)$/;

interface KeyStatement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Principal: { readonly AWS: unknown };
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

describe('the job-request key', () => {
  let resources: Record<string, CfnResource>;
  let keyId: string;
  let keyPolicy: KeyStatement[];
  /** The key policy's principal for a function's role. */
  const rolePrincipal = (name: string) => ({ 'Fn::GetAtt': [roleOf(resources, functionId(name)), 'Arn'] });
  /** Who the key policy lets perform `action`, as the template names them. */
  const allowedBy = (action: string) =>
    keyPolicy.filter((s) => s.Effect === 'Allow' && asArray(s.Action).some((a) => a === action || a === 'kms:*')).flatMap((s) => asArray(s.Principal.AWS));
  /** The functions whose role's own policy allows `action` on the key. */
  const rolesAllowing = (action: string) =>
    ALL_FUNCTIONS.filter((name) =>
      statementsOfRole(resources, roleOf(resources, functionId(name))).some(
        (s) => asArray(s.Action).some((a) => a === action || a === 'kms:*') && JSON.stringify(asArray(s.Resource)).includes(keyId),
      ),
    );

  beforeAll(() => {
    ({ resources } = synthStack());
    const keys = resourcesOfType(resources, 'AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    keyId = keys[0]![0];
    keyPolicy = keys[0]![1].Properties!.KeyPolicy.Statement as KeyStatement[];
  });

  test('is a customer-managed symmetric key, rotated by KMS, kept when the stack is deleted in production', () => {
    const key = resources[keyId]!;
    expect(keyId).toMatch(/^StorageJobRequestKey/);
    expect(key.Properties).toMatchObject({ EnableKeyRotation: true });
    expect(key.Properties?.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
    expect(key.Properties?.KeyUsage ?? 'ENCRYPT_DECRYPT').toBe('ENCRYPT_DECRYPT');
    expect(key.DeletionPolicy).toBe('Retain');
  });

  test('only the functions that run jobs (job, bulkWorker) can decrypt: by its key policy and by every role’s own policy', () => {
    expect(allowedBy('kms:Decrypt').map((p) => JSON.stringify(p)).sort()).toEqual([rolePrincipal('job'), rolePrincipal('bulkWorker')].map((p) => JSON.stringify(p)).sort());
    expect(rolesAllowing('kms:Decrypt').sort()).toEqual(['bulkWorker', 'job']);
  });

  test('the functions that submit jobs (generate, batch, bulk) can only encrypt; nothing else can', () => {
    expect(allowedBy('kms:Encrypt').map((p) => JSON.stringify(p)).sort()).toEqual(
      [rolePrincipal('generate'), rolePrincipal('batch'), rolePrincipal('bulk')].map((p) => JSON.stringify(p)).sort(),
    );
    expect(rolesAllowing('kms:Encrypt').sort()).toEqual(['batch', 'bulk', 'generate']);
    for (const name of ALL_FUNCTIONS) {
      const actions = keyPolicy.filter((s) => JSON.stringify(s.Principal.AWS) === JSON.stringify(rolePrincipal(name))).flatMap((s) => asArray(s.Action));
      expect(actions, name).toEqual((FUNCTION_PROFILES[name].jobRequestKey ?? []).map((op) => `kms:${op}`));
    }
  });

  test('the account may administer the key but not use it, nor grant its use; no statement allows everyone or denies', () => {
    for (const statement of keyPolicy) {
      expect(statement.Effect).toBe('Allow');
      expect(statement.Condition).toBeUndefined();
      expect(JSON.stringify(statement.Principal.AWS)).not.toBe('"*"');
    }
    const roles = new Set(ALL_FUNCTIONS.map((name) => JSON.stringify(rolePrincipal(name))));
    const others = keyPolicy.filter((s) => !roles.has(JSON.stringify(s.Principal.AWS)));
    expect(others).toHaveLength(1);
    expect(JSON.stringify(others[0]!.Principal.AWS)).toContain(':root');
    const actions = asArray(others[0]!.Action);
    expect(actions.filter((action) => USES.test(action))).toEqual([]);
    expect(actions).toEqual(expect.arrayContaining(['kms:PutKeyPolicy', 'kms:ScheduleKeyDeletion', 'kms:EnableKeyRotation', 'kms:DescribeKey']));
    for (const action of actions) expect(action, 'no wildcard can grow into a use of the key').not.toContain('*');
  });

  test('only the functions that seal or open job requests are told the key', () => {
    for (const name of ALL_FUNCTIONS) {
      const variables = (resources[functionId(name)]!.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment.Variables;
      if (FUNCTION_PROFILES[name].jobRequestKey) expect(variables.JOB_REQUEST_KEY_ARN, name).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
      else expect(variables, name).not.toHaveProperty('JOB_REQUEST_KEY_ARN');
      expect(variables, name).not.toHaveProperty('JOB_REQUEST_SECRET');
    }
  });
});
