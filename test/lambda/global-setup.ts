/**
 * The stack synthesized once for every Lambda emulation test file, as `cdk deploy` would synthesize
 * it (`LAMBDA_TEST_CDK_OUT=<dir>` reuses an assembly already synthesized there, while working on
 * these tests), removed when they are done.
 */
import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { synthesize } from '../support/synth.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The synthesized cloud assembly (cdk.out) the emulation runs. */
    lambdaCdkOut: string;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const given = process.env.LAMBDA_TEST_CDK_OUT;
  const outdir = given ?? (await synthesize());
  project.provide('lambdaCdkOut', outdir);
  return () => {
    if (!given) rmSync(outdir, { recursive: true, force: true });
  };
}
