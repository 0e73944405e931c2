/**
 * The stack synthesized once for every Lambda emulation test file (and synth.test.ts, which checks
 * the assembly itself), as `cdk deploy` would synthesize it (`LAMBDA_TEST_CDK_OUT=<dir>` reuses an
 * assembly already synthesized there, while working on these tests), removed when they are done.
 *
 * The synth (about 35 s on two cores) is started here but not awaited: the other projects' files run
 * meanwhile, and each lambda file waits for it with `synthesizedAssembly()` (./assembly.ts), which
 * reads the outcome this setup writes beside the assembly.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { synthesize } from '../support/synth.ts';
import { outcomeFile, type SynthOutcome } from './assembly.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the synthesized cloud assembly (cdk.out) the emulation runs is, or will be once synthesized. */
    lambdaCdkOut: string;
  }
}

export default function setup(project: TestProject): () => Promise<void> {
  const given = process.env.LAMBDA_TEST_CDK_OUT;
  const outdir = given ?? mkdtempSync(join(tmpdir(), 'pdf-api-cdk-out-'));
  project.provide('lambdaCdkOut', outdir);
  const record = (outcome: SynthOutcome) => writeFileSync(outcomeFile(outdir), JSON.stringify(outcome));
  const started = performance.now();
  const synthesized: Promise<void> = given
    ? Promise.resolve(record({ synthMs: 0 }))
    : synthesize(outdir).then(
        () => record({ synthMs: Math.round(performance.now() - started) }),
        (error: unknown) => record({ error: error instanceof Error ? error.message : String(error) }),
      );
  return async () => {
    await synthesized;
    rmSync(outcomeFile(outdir), { force: true });
    if (!given) rmSync(outdir, { recursive: true, force: true });
  };
}
