/**
 * cdk-nag's AwsSolutions pack (the same check `npx cdk synth` runs, see cdk/app.ts) finds nothing
 * that is neither fixed nor acknowledged, and every acknowledgement has a reason and still matters.
 */
import { Validations } from 'aws-cdk-lib';
import nag from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, test } from 'vitest';
import { synthStack } from './stack-fixture.ts';

interface Finding {
  readonly rule: string;
  readonly severity: string;
  readonly path: string;
}

function findings(scope: IConstruct, { ignoreAcknowledgements = false } = {}): Finding[] {
  const pack = new nag.AwsSolutionsChecks();
  // The pack honours acknowledgements; without them it shows what each one hides.
  if (ignoreAcknowledgements) Object.defineProperty(pack, 'isAcknowledged', { value: () => false });
  const report = pack.validateScope(scope);
  return report.violations.flatMap((violation) =>
    violation.violatingResources.map((resource) => ({
      rule: violation.ruleName,
      severity: violation.severity ?? 'error',
      path: resource.constructPath ?? '?',
    })),
  );
}

/** Every acknowledgement in the tree: where, which rule, why. */
function acknowledgements(scope: IConstruct): { path: string; id: string; reason: string }[] {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>))
      .map(([id, reason]) => ({ path: construct.node.path, id: id.replace(/^[^:]+::(?=AwsSolutions)/, ''), reason })),
  );
}

describe.each([
  ['production defaults', {}],
  ['dev switches (no deletion protection, no tracing, alarm e-mail)', { deletionProtection: 'false', tracing: 'false', alarmEmail: 'ops@example.com' }],
  ['concurrency switches (render reserved and provisioned, generate provisioned)', { renderReservedConcurrency: '20', renderProvisionedConcurrency: '5', generateProvisionedConcurrency: '2' }],
])('cdk-nag AwsSolutions, %s', (_label, context) => {
  const { app } = synthStack(context);

  test('no errors and no warnings are left', () => {
    expect(findings(app)).toEqual([]);
  });

  test('every acknowledgement carries a reason', () => {
    const acks = acknowledgements(app);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) expect(ack.reason.length, `${ack.id} at ${ack.path}`).toBeGreaterThan(40);
  });

  test('every acknowledgement hides a real finding at or below its construct (none is stale)', () => {
    const raw = findings(app, { ignoreAcknowledgements: true });
    for (const ack of acknowledgements(app)) {
      const hidden = raw.filter((f) => f.rule === ack.id && (f.path === ack.path || f.path.startsWith(`${ack.path}/`)));
      expect(hidden.length, `${ack.id} at ${ack.path}`).toBeGreaterThan(0);
    }
  });
});
