/**
 * Running the pdfapi CLI as a developer runs it after `npm ci`: the bin npm linked
 * (node_modules/.bin/pdfapi), PDFAPI_URL pointing at the local stack and PDFAPI_KEY from the key tool.
 */
import { spawn } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { expect } from 'vitest';
import { apiUrl, type TestKey } from './api.ts';

const BIN = join(process.cwd(), 'node_modules', '.bin', 'pdfapi');

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stdoutBytes: Buffer;
  readonly stderr: string;
}

/** Runs the linked bin; its `#!/usr/bin/env node` finds the pinned Node first on PATH, as under `npx`. */
export function pdfapi(args: readonly string[], { key, input, env = {}, cwd }: { key?: TestKey; input?: string | Buffer; env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, {
      cwd,
      env: {
        ...process.env,
        PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`,
        PDFAPI_URL: apiUrl,
        PDFAPI_KEY: key?.apiKey ?? '',
        ...env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({ code, stdout: stdoutBytes.toString('utf8'), stdoutBytes, stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.end(input ?? '');
  });
}

/** No stack trace reaches the user, whatever failed. */
export function expectNoStackTrace(run: Run): void {
  expect(run.stderr).not.toMatch(/^\s+at /m);
  expect(run.stdout).not.toMatch(/^\s+at /m);
}
