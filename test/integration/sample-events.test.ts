/**
 * The sample events in events/ (for `sam local invoke -e events/<name>.json`) are real: each is run
 * through its function's handler, in this process, against the running local stack's DynamoDB, S3
 * and Lambda Invoke stand-ins, and gets the answer it should. A freshly created key, PDF id and
 * link take the place of the placeholders, as a user would paste theirs in.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, test, vi } from 'vitest';
import type { StackInfo } from '#lib/local/stack-info.ts';
import { createKey, type TestKey } from '../support/api.ts';
import { bodyOf, EVENTS_DIR, PLACEHOLDER_KEY, readEvent, withKey, withPdf } from '../support/sample-events.ts';

type AnyHandler = (event: unknown, context: Context) => Promise<unknown>;

describe('sample events (events/*.json)', () => {
  let handlers: Record<string, AnyHandler>;
  let context: (name: string) => Context;
  let key: TestKey;
  let closeBrowser: () => Promise<void>;
  const run = (name: string, event: unknown) => handlers[name]!(event, context(name)) as Promise<APIGatewayProxyResult>;

  beforeAll(async () => {
    // The environment a deployed function gets from the stack, pointed at the local stand-ins.
    const dataDir = inject('dataDir');
    const info = JSON.parse(readFileSync(join(dataDir, 'stack.json'), 'utf8')) as StackInfo;
    const { localAwsEnvironment } = await import('#lib/local/stack-info.ts');
    const environment: Record<string, string> = {
      ...localAwsEnvironment(info),
      LINK_SIGNING_SECRET: readFileSync(join(dataDir, 'link-signing-secret'), 'utf8').trim(),
      // An async request submitted here is run by the stack's job function: sealed with its secret.
      JOB_REQUEST_SECRET: readFileSync(join(dataDir, 'job-request-secret'), 'utf8').trim(),
      AWS_ENDPOINT_URL_LAMBDA: info.lambdaEndpoint,
      RENDER_FUNCTION_NAME: 'render',
      JOB_FUNCTION_NAME: 'job',
      RENDER_TIMEOUT_MS: String(inject('renderTimeoutMs')),
      PUBLIC_BASE_URL: '',
    };
    for (const [name, value] of Object.entries(environment)) vi.stubEnv(name, value);

    const { API_HANDLERS, INVOKED_HANDLERS } = await import('#lib/local/handlers.ts');
    handlers = { ...API_HANDLERS, ...INVOKED_HANDLERS } as unknown as Record<string, AnyHandler>;
    const { lambdaContext } = await import('#lib/local/gateway.ts');
    context = (name) => lambdaContext(name, 29_000);
    ({ closeBrowser } = await import('#lib/render/browser.ts'));
    key = await createKey('pro');
  });

  afterAll(async () => {
    await closeBrowser?.();
    vi.unstubAllEnvs();
  });

  test('there is one sample event per function, and each API event is routed to the function it is named after', async () => {
    const { API_FUNCTIONS, INTERNAL_FUNCTIONS, FALLBACK_HANDLER, matchRoute } = await import('#lib/api/routes.ts');
    const names = readdirSync(EVENTS_DIR).filter((file) => file.endsWith('.json')).map((file) => file.replace(/\.json$/, ''));
    // A function invoked two ways has a second event named <function>-<case> (reconcile-job-failures).
    expect(names.filter((name) => !name.includes('-')).sort()).toEqual([...API_FUNCTIONS, ...INTERNAL_FUNCTIONS].sort());
    for (const variant of names.filter((name) => name.includes('-'))) expect([...INTERNAL_FUNCTIONS]).toContain(variant.split('-')[0]);
    for (const name of API_FUNCTIONS) {
      const event = readEvent(name);
      const match = matchRoute(event.httpMethod, event.path);
      const routed = 'route' in match ? match.route.handler : FALLBACK_HANDLER;
      expect(routed, name).toBe(name);
      expect(event.resource, name).toBe('route' in match ? match.route.path : '/{proxy+}');
      expect(event.requestContext.resourcePath, name).toBe(event.resource);
    }
  });

  test('health: 200 ok, the stores checked and the browser not (as in AWS, where the health function has none)', async () => {
    const result = await run('health', readEvent('health'));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({
      status: 'ok',
      checks: { browser: 'not_checked', table: 'ok', bucket: 'ok' },
      event_loop: { delay_p99_ms: expect.any(Number), delay_max_ms: expect.any(Number) },
    });
  });

  test('fallback: 404 not_found in the API’s error shape', async () => {
    const result = await run('fallback', readEvent('fallback'));
    expect(result.statusCode).toBe(404);
    expect(bodyOf(result).error.code).toBe('not_found');
  });

  test.each(['generate', 'batch', 'pdfs', 'jobs', 'usage'])('%s with the placeholder key: 401', async (name) => {
    const event = readEvent(name);
    expect(event.headers.Authorization).toBe(`Bearer ${PLACEHOLDER_KEY}`);
    const result = await run(name, event);
    expect(result.statusCode).toBe(401);
    expect(bodyOf(result).error.code).toBe('unauthorized');
  });

  test('usage with a real key: 200 with the key’s tier', async () => {
    const result = await run('usage', withKey(readEvent('usage'), key.apiKey));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toMatchObject({ tier: 'pro', quota_remaining: expect.any(Number) });
  });

  test('generate, then pdfs, files and pdfs DELETE on the PDF it made', async () => {
    // generate: a PDF and a link on the execute-api host and stage the event came through.
    const generated = await run('generate', withKey(readEvent('generate'), key.apiKey));
    expect(generated.statusCode).toBe(200);
    const record = bodyOf(generated);
    expect(record).toMatchObject({ id: expect.stringMatching(/^pdf_\w{20,}$/), format: 'A4', pages: 1 });
    const link = new URL(record.url);
    expect(`${link.origin}${link.pathname}`).toBe(`https://abc123defg.execute-api.us-east-1.amazonaws.com/prod/v1/files/${record.id}`);

    // pdfs as shipped names no real PDF: 404; with the new id: the record.
    expect((await run('pdfs', withKey(readEvent('pdfs'), key.apiKey))).statusCode).toBe(404);
    const fetched = await run('pdfs', withKey(withPdf(readEvent('pdfs'), record.id), key.apiKey));
    expect(fetched.statusCode).toBe(200);
    expect(bodyOf(fetched).id).toBe(record.id);

    // files as shipped carries no valid signature: 404; with the link's own: a redirect to S3.
    expect((await run('files', readEvent('files'))).statusCode).toBe(404);
    const query = Object.fromEntries(link.searchParams) as Record<string, string>;
    const downloaded = await run('files', withPdf(readEvent('files'), record.id, query));
    expect(downloaded.statusCode).toBe(302);
    expect(String(downloaded.headers?.Location)).toContain(record.id);

    // pdfs as a DELETE: 204, and the PDF is gone.
    const deleteEvent = { ...withKey(withPdf(readEvent('pdfs'), record.id), key.apiKey), httpMethod: 'DELETE' };
    expect((await run('pdfs', deleteEvent)).statusCode).toBe(204);
    expect((await run('pdfs', withKey(withPdf(readEvent('pdfs'), record.id), key.apiKey))).statusCode).toBe(404);
  });

  test('batch with a real key: every item rendered by the render function', async () => {
    const result = await run('batch', withKey(readEvent('batch'), key.apiKey));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toMatchObject({ success: true, total: 2, successful: 2, failed: 0 });
    expect(bodyOf(result).results.map((r: { metadata: unknown }) => r.metadata)).toEqual([{ reference_id: 'inv-1' }, { reference_id: 'inv-2' }]);
  });

  test('reconcile, invoked with the sample scheduled event: a report of what it repaired', async () => {
    const report = await handlers.reconcile!(readEvent('reconcile'), context('reconcile'));
    expect(report).toEqual({
      repaired: expect.any(Number),
      returned: expect.any(Number),
      charged: expect.any(Number),
      abandonedJobs: expect.any(Number),
      // Bulk jobs whose submission died before their chunks were all on the queue, queued again.
      requeuedBulkJobs: expect.any(Number),
    });
  });

  test('reconcile, invoked with a failure-queue batch: each record handled, none retried; a job that ended meanwhile is left as it is', async () => {
    // As shipped the record names no real job: nothing to end, nothing to retry.
    const shipped = readEvent<{ Records: { body: string; messageId: string }[] }>('reconcile-job-failures');
    expect(await handlers.reconcile!(shipped, context('reconcile'))).toEqual({ batchItemFailures: [] });
    // A job whose last run finished after all: still succeeded, charged once. (Ending a job that
    // is still running is tested through the local stack's own give-up path, job-fairness.test.ts.)
    const asyncEvent = withKey(readEvent('generate'), key.apiKey);
    const submitted = await run('generate', { ...asyncEvent, body: JSON.stringify({ ...JSON.parse(asyncEvent.body!), async: true }) });
    const jobId = bodyOf(submitted).job_id as string;
    await handlers.job!({ job_id: jobId }, context('job'));
    const record = JSON.parse(shipped.Records[0]!.body);
    const event = { Records: [{ ...shipped.Records[0], body: JSON.stringify({ ...record, requestPayload: { job_id: jobId } }) }] };
    expect(await handlers.reconcile!(event, context('reconcile'))).toEqual({ batchItemFailures: [] });
    const jobEvent = withKey(readEvent('jobs'), key.apiKey);
    const read = bodyOf(await run('jobs', { ...jobEvent, path: `/v1/jobs/${jobId}`, pathParameters: { job_id: jobId } }));
    expect(read).toMatchObject({ job_id: jobId, status: 'succeeded', result: { pages: 1 } });
    // A record that is not one Lambda sends is reported back, to come again (then to the dead-letter queue).
    const garbled = { Records: [{ ...shipped.Records[0], body: 'not json' }] };
    expect(await handlers.reconcile!(garbled, context('reconcile'))).toEqual({ batchItemFailures: [{ itemIdentifier: shipped.Records[0]!.messageId }] });
  });

  test('webhooks, invoked with the sample scheduled event: how many due deliveries it tried', async () => {
    expect(await handlers.webhooks!(readEvent('webhooks'), context('webhooks'))).toEqual({ tried: expect.any(Number) });
  });

  test('job: the sample payload names no job and runs nothing; a job submitted by generate runs to its end, read back by jobs', async () => {
    expect(await handlers.job!(readEvent('job'), context('job'))).toBeUndefined();
    const asyncEvent = withKey(readEvent('generate'), key.apiKey);
    const submitted = await run('generate', { ...asyncEvent, body: JSON.stringify({ ...JSON.parse(asyncEvent.body!), async: true }) });
    expect(submitted.statusCode).toBe(202);
    const { job_id: jobId, status_url: statusUrl } = bodyOf(submitted);
    expect(statusUrl).toBe(`https://abc123defg.execute-api.us-east-1.amazonaws.com/prod/v1/jobs/${jobId}`);
    // The stack's Invoke endpoint runs it too: a job is run to its end once, whichever run gets there.
    await handlers.job!({ job_id: jobId }, context('job'));
    const jobEvent = withKey(readEvent('jobs'), key.apiKey);
    const read = await run('jobs', { ...jobEvent, path: `/v1/jobs/${jobId}`, pathParameters: { job_id: jobId } });
    expect(read.statusCode).toBe(200);
    expect(bodyOf(read)).toMatchObject({ job_id: jobId, status: 'succeeded', result: { pages: 1, format: 'A4' } });
  });

  test('render, invoked with the sample payload for a real key: a stored PDF file and the record the batch would write', async () => {
    const payload = readEvent<{ owner: { keyId: string; tier: string }; item: unknown }>('render');
    const outcome = (await handlers.render!({ ...payload, owner: { keyId: key.keyId, tier: key.tier } }, context('render'))) as {
      ok: boolean;
      record?: { id: string; keyId: string; pages: number };
    };
    expect(outcome).toMatchObject({ ok: true, record: { keyId: key.keyId, pages: 1 } });
  });
});
