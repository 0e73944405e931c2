/**
 * The CDK app (`npx cdk synth | deploy`, see cdk.json): the PDF API stack, checked by cdk-nag's
 * AwsSolutions pack. Any finding that is neither fixed nor acknowledged with a reason stops the
 * synth, so nothing is deployed past an unexamined finding.
 */
import { App, Validations } from 'aws-cdk-lib';
import nag from 'cdk-nag';
import { PdfApiStack, STACK_NAME, stackPropsFromContext } from './stack.ts';

const app = new App();
new PdfApiStack(app, STACK_NAME, stackPropsFromContext(app.node));
Validations.of(app).addPlugins(new nag.AwsSolutionsChecks(app));
