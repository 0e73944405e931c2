/**
 * Error log lines carry the error's name and message (first line), never its stack; /health's
 * checks are bounded by their timeout and say only ok, down or not_checked.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
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
    expect(report).toEqual({ status: 'ok', checks: { browser: 'not_checked', table: 'ok', bucket: 'ok' }, event_loop: { delay_p99_ms: expect.any(Number), delay_max_ms: expect.any(Number) } });
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
    expect(report).toEqual({ status: 'unavailable', checks: { browser: 'ok', table: 'down', bucket: 'down' }, event_loop: { delay_p99_ms: expect.any(Number), delay_max_ms: expect.any(Number) } });
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

describe('log lines of concurrent invocations in the local stack', () => {
  it('carry their own request’s id and keys, never another’s', async () => {
    // Act: a process serving two overlapping requests through the local API adapter, each handled
    // by the standard middleware chain; the first logs again only after the second has logged.
    const { stdout } = await run(process.execPath, [
      '--input-type=module',
      '-e',
      `const { createGateway } = await import('#lib/local/gateway.ts');
       const { apiHandler } = await import('#lib/api/middlewares.ts');
       const { json } = await import('#lib/api/http.ts');
       const { logger } = await import('#lib/observability/logger.ts');
       let firstStarted, secondLogged;
       const firstHasStarted = new Promise((resolve) => (firstStarted = resolve));
       const secondHasLogged = new Promise((resolve) => (secondLogged = resolve));
       const handler = apiHandler({ body: false }, async ({ event, context }) => {
         const caller = event.headers['x-caller'];
         logger.appendKeys({ caller });
         logger.info('started');
         if (caller === 'first') { firstStarted(); await secondHasLogged; } else secondLogged();
         logger.info('finished');
         return json(200, { request_id: context.awsRequestId });
       });
       const server = createGateway(new Proxy({}, { get: () => handler }), { timeoutMs: 10_000 });
       await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
       const url = 'http://127.0.0.1:' + server.address().port + '/health';
       const ask = (caller) => fetch(url, { headers: { 'x-caller': caller } }).then((response) => response.json());
       const first = ask('first');
       await firstHasStarted;
       const answers = await Promise.all([first, ask('second')]);
       logger.info('both answered');
       console.log(JSON.stringify({ answers: answers.map((answer) => answer.request_id) }));
       server.close();`,
    ], { env: { ...process.env, POWERTOOLS_LOG_LEVEL: 'INFO', POWERTOOLS_METRICS_DISABLED: 'true' } });

    // Assess
    const lines = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    const [first, second] = (lines.find((line) => 'answers' in line)!.answers as string[]);
    const described = lines.filter((line) => 'message' in line).map(({ message, caller, function_request_id }) => ({ message, caller, function_request_id }));
    const logged = described.filter((line) => line.message !== 'request');
    // Each request's own line (lib/api/request-log.ts), written as it is answered, in its own context too.
    expect(described.filter((line) => line.message === 'request')).toEqual(
      expect.arrayContaining([
        { message: 'request', caller: 'first', function_request_id: first },
        { message: 'request', caller: 'second', function_request_id: second },
      ]),
    );
    expect(described.filter((line) => line.message === 'request')).toHaveLength(2);
    expect(logged).toEqual([
      { message: 'started', caller: 'first', function_request_id: first },
      { message: 'started', caller: 'second', function_request_id: second },
      { message: 'finished', caller: 'second', function_request_id: second },
      { message: 'finished', caller: 'first', function_request_id: first },
      // A line of no request carries none.
      { message: 'both answered', caller: undefined, function_request_id: undefined },
    ]);
    expect(first).not.toBe(second);
  });
});

describe('a process started by the local stack', () => {
  it('records metrics and logs although it inherited AWS_LAMBDA_MAX_CONCURRENCY without the stack’s InvokeStore', async () => {
    // Prepare: what the keys CLI, or a stack a test starts, inherits from a process serving local invocations
    const script = `
      const { recordDocumentFailure, flushMetrics } = await import('#lib/observability/metrics.ts');
      const { logger } = await import('#lib/observability/logger.ts');
      recordDocumentFailure('RENDER_FAILED');
      flushMetrics().after();
      logger.error('still logging');`;

    // Act
    const { stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '../..'),
      env: { ...process.env, AWS_LAMBDA_MAX_CONCURRENCY: '1000', POWERTOOLS_METRICS_DISABLED: 'false', POWERTOOLS_LOG_LEVEL: 'ERROR' },
    });

    // Assess
    expect(stdout).toContain('"DocumentFailures":1');
    expect(stdout + stderr).toContain('still logging');
  });
});
