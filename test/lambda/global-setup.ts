/**
 * The stack synthesized once for every Lambda emulation test file (and synth.test.ts, which checks the assembly itself), as `cdk deploy` would synthesize
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
    /** How long synthesizing it took (0 when LAMBDA_TEST_CDK_OUT named one already made). */
    lambdaSynthMs: number;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const given = process.env.LAMBDA_TEST_CDK_OUT;
  const started = performance.now();
  const outdir = given ?? (await synthesize());
  project.provide('lambdaCdkOut', outdir);
  project.provide('lambdaSynthMs', given ? 0 : Math.round(performance.now() - started));
  return () => {
    if (!given) rmSync(outdir, { recursive: true, force: true });
  };
}
