/**
 * Error log lines carry the error's name and message (first line), never its stack; /health's
 * checks are bounded by their timeout and say only ok, down or not_checked.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { checkHealth } from '#lib/observability/health.ts';
import { errorFields } from '#lib/observability/logger.ts';

const run = promisify(execFile);

describe('errorFields', () => {
  it('keeps the name and the first line of the message, and the cause’s', () => {
    // Prepare
    const cause = new TypeError('socket hang up\n    at Socket.<anonymous> (/work/main/lib/x.ts:1:1)');
    const error = new Error('upload failed\nsecond line', { cause });
    error.name = 'StorageError';

    // Act
    const fields = errorFields(error);

    // Assess
    expect(fields).toEqual({ error: { name: 'StorageError', message: 'upload failed', cause: 'TypeError: socket hang up' } });
  });

  it('describes a thrown non-error, and cuts a very long message', () => {
    // Act
    const thrown = errorFields('plain string');
    const long = errorFields(new Error('x'.repeat(5_000)));

    // Assess
    expect(thrown).toEqual({ error: { name: 'string', message: 'plain string' } });
    expect(long.error.message.length).toBeLessThan(400);
  });

  it('survives Powertools: the logged line has the message, and no stack', async () => {
    // Act: a real logger in a fresh process, as a function logs
    const { stdout, stderr } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      `const { logger, errorFields } = await import('#lib/observability/logger.ts');
       logger.error('request failed', { code: 'render_failed', ...errorFields(new RangeError('the cause, in words')) });`,
    ], { env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'INFO' } });

    // Assess (Powertools writes warnings and errors to stderr; Lambda sends both streams to the log group)
    const output = stdout + stderr;
    const lines = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'ERROR', message: 'request failed', code: 'render_failed', error: { name: 'RangeError', message: 'the cause, in words' } });
    expect(output).not.toMatch(/stack|\bat /);
  });
});

describe('checkHealth', () => {
  it('is ok when every given check answers, and not_checked for what it was not given', async () => {
    // Act
    const report = await checkHealth({ table: async () => ({}), bucket: async () => ({}) });

    // Assess
    expect(report).toEqual({ status: 'ok', checks: { browser: 'not_checked', table: 'ok', bucket: 'ok' } });
  });

  it('is unavailable, naming the check, when one fails or never answers, and says nothing more', async () => {
    // Act
    const report = await checkHealth(
      {
        table: () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:1234')),
        bucket: () => new Promise(() => undefined),
        browser: async () => 'HeadlessChrome/1',
      },
      100,
    );

    // Assess
    expect(report).toEqual({ status: 'unavailable', checks: { browser: 'ok', table: 'down', bucket: 'down' } });
  });

  it('aborts a check that outlives its timeout', async () => {
    // Prepare
    let aborted: unknown;
    const hanging = (signal: AbortSignal) =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject((aborted = signal.reason))));

    // Act
    const report = await checkHealth({ table: hanging }, 50);

    // Assess
    expect(report.checks.table).toBe('down');
    expect(aborted).toBeInstanceOf(Error);
  });
});
