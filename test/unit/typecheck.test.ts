/**
 * The whole project type-checks (`tsc --noEmit`, as `npm run typecheck` runs it): part of `npm test`
 * as a test, so it runs beside the other files instead of holding up the start of the suite
 * (about 30 s of one core on the 2-core machine).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { expect, it } from 'vitest';

it('the project type-checks with tsc --noEmit: no diagnostics', async () => {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const child = spawn(process.execPath, [tsc, '--noEmit', '--pretty', 'false'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  // The diagnostics themselves, so a failure reads as tsc's own report.
  expect(output.trim()).toBe('');
  expect(code).toBe(0);
}, 300_000);
