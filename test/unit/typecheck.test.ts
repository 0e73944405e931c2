/**
 * The whole project type-checks (`tsc --noEmit`, as `npm run typecheck` runs it): part of `npm test`
 * as a test, so it runs beside the other files instead of holding up the start of the suite.
 *
 * The checker is TypeScript 7 (the native compiler, devDependency `typescript7`): the same
 * diagnostics as TypeScript 5 on this project in about 8 s of CPU instead of 47. TypeScript 5 stays
 * the `typescript` package for the tools that use its JavaScript API (openapi-typescript, the
 * import-layers test's `preProcessFile`), which TypeScript 7 does not offer.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';

it('the project type-checks with tsc --noEmit: no diagnostics', async () => {
  // Both packages declare a `tsc` bin, and which one npm links is not ours to choose: the path is.
  const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript7/package.json')), 'bin', 'tsc');
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
