/**
 * The cloud assembly the lambda project's global setup synthesizes while the unit and CDK groups
 * run (see global-setup.ts): a lambda file awaits it before starting its emulated stack.
 */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';

/** What the setup writes once `cdk synth` is done: how long it took, or why it failed. */
export type SynthOutcome = { synthMs: number } | { error: string };

/** Beside the assembly, not in it: synth.test.ts checks the assembly's files. */
export const outcomeFile = (outdir: string) => `${outdir}.outcome.json`;

/** The synthesized assembly's directory and how long `cdk synth` took, once it is done. */
export async function synthesizedAssembly(): Promise<{ outdir: string; synthMs: number }> {
  const outdir = inject('lambdaCdkOut');
  const file = outcomeFile(outdir);
  // The file appears once, whole (written in one call after the synth ends): no partial read.
  while (!existsSync(file)) await sleep(250);
  const outcome = JSON.parse(readFileSync(file, 'utf8')) as SynthOutcome;
  if ('error' in outcome) throw new Error(`npx cdk synth failed: ${outcome.error}`);
  return { outdir, synthMs: outcome.synthMs };
}
