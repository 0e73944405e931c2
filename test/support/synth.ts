/**
 * `npx cdk synth` into a new directory, exactly as a user runs it before `cdk deploy` or
 * `sam local invoke`: the project's bin first on the PATH, as `npm test` has it (cdk.json's `node`
 * is Node 24). Used by the synth test, the Lambda emulation and the bench.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../cdk/stack.ts';

const run = promisify(execFile);

export async function synthesize(outdir = mkdtempSync(join(tmpdir(), 'pdf-api-cdk-out-'))): Promise<string> {
  await run('npx', ['cdk', 'synth', '--quiet', '--output', outdir], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PATH: `${join(PROJECT_ROOT, 'node_modules', '.bin')}:${process.env.PATH}`, CDK_DISABLE_VERSION_CHECK: 'true' },
    maxBuffer: 64 * 1024 * 1024,
  });
  return outdir;
}
