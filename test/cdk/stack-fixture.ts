/**
 * The stack as `npx cdk synth` builds it (cdk.json's context, the same props from context), for
 * template assertions. Asset bundling is skipped here, which only leaves the function code and the
 * layer out of the assembly; synth.test.ts runs the real `cdk synth` with bundling.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PdfApiStack, PROJECT_ROOT, STACK_NAME, stackPropsFromContext } from '../../cdk/stack.ts';

const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };

export interface SynthesizedStack {
  readonly app: App;
  readonly stack: PdfApiStack;
  readonly template: Template;
  /** The template as JSON, for walking references. */
  readonly resources: Record<string, CfnResource>;
}

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, any>;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
  readonly Metadata?: Record<string, any>;
}

/** Synthesizes the stack with cdk.json's context plus `context` (what `-c name=value` would add). */
export function synthStack(context: Record<string, unknown> = {}): SynthesizedStack {
  // CloudFormation's own template validation (seconds per synth) runs in synth.test.ts's real synth.
  const app = new App({
    context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context },
    builtinCloudFormationValidation: false,
  });
  const stack = new PdfApiStack(app, STACK_NAME, stackPropsFromContext(app.node));
  const template = Template.fromStack(stack);
  return { app, stack, template, resources: template.toJSON().Resources as Record<string, CfnResource> };
}

/** Logical ids and resources of one type. */
export function resourcesOfType(resources: Record<string, CfnResource>, type: string): [string, CfnResource][] {
  return Object.entries(resources).filter(([, resource]) => resource.Type === type);
}

export const asArray = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** One statement of an IAM policy. */
export interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

/** The logical id of a resource's role: a Lambda function's, for one. */
export const roleOf = (resources: Record<string, CfnResource>, logicalId: string): string => resources[logicalId]!.Properties!.Role['Fn::GetAtt'][0] as string;

/** Every statement of the inline policies attached to a role. */
export function statementsOfRole(resources: Record<string, CfnResource>, roleId: string): Statement[] {
  return resourcesOfType(resources, 'AWS::IAM::Policy')
    .filter(([, policy]) => asArray(policy.Properties?.Roles).some((role: { Ref?: string }) => role.Ref === roleId))
    .flatMap(([, policy]) => policy.Properties?.PolicyDocument.Statement as Statement[]);
}
