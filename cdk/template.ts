/**
 * The stack's CloudFormation template as `npx cdk synth` writes it (cdk.json's context plus any
 * `-c name=value` given here), without bundling: only the function code and the layer are left out,
 * so everything the template says (resources, environment, outputs) is what a deploy creates. Read
 * by the tools that describe the stack (bin/generate-docs.ts, bin/sam-env.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { PdfApiStack, PROJECT_ROOT, STACK_NAME, stackPropsFromContext } from './stack.ts';

/** An intrinsic function (`{ Ref }`, `{ "Fn::GetAtt" }`, ...) or a literal, as a template writes a value. */
export type TemplateValue = string | number | boolean | { readonly [intrinsic: string]: unknown };

export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, any>;
}

export interface StackTemplate {
  readonly Resources: Record<string, TemplateResource>;
  readonly Outputs?: Record<string, { readonly Description?: string; readonly Value: TemplateValue }>;
}

export function synthesizedTemplate(context: Record<string, unknown> = {}): StackTemplate {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  const app = new App({ context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [], ...context }, builtinCloudFormationValidation: false });
  new PdfApiStack(app, STACK_NAME, stackPropsFromContext(app.node));
  return app.synth().getStackByName(STACK_NAME).template as StackTemplate;
}
