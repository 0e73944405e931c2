/**
 * The stack runs as Lambda runs it: `npx cdk synth`, then every function's asset from `cdk.out` in
 * Lambda-like execution environments (emulator/environment.ts: read-only task root, the layer
 * read-only at a root of its own reached through NODE_PATH, a private /tmp of the configured size,
 * Lambda's uid and variables, AWS's own runtime interface client against a Runtime API served
 * here), with the template's environment pointed at the local stand-ins (dynalite, s3rver, a
 * Secrets Manager and a Lambda Invoke API of the emulator's own). Each function answers its sample
 * event from events/; the batch fans out to the render function's environments and generate's
 * job runs in the job function's, through the functions' own SDK calls.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { API_FUNCTIONS, FUNCTION_PROFILES, INTERNAL_FUNCTIONS } from '#lib/api/routes.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { normalizeText, readPdf } from '../support/pdf.ts';
import { bodyOf, PLACEHOLDER_KEY, readEvent, withBody, withKey, withPdf } from '../support/sample-events.ts';
import { isolationAvailable, LambdaEnvironment } from './emulator/environment.ts';
import type { LambdaEmulator } from './emulator/emulator.ts';
import { synthesize } from '../support/synth.ts';
import { LINK_SECRET_ARN, startEmulatedStack, type EmulatedStack } from './emulator/stack.ts';

describe('every function from cdk.out, run as Lambda runs it', () => {
  let stack: EmulatedStack;
  let emulator: LambdaEmulator;
  let apiKey: string;

  /** Invokes a function by its name in routes.ts; its answer, or the test fails with its logs. */
  const invoke = async <T = APIGatewayProxyResult>(name: string, event: unknown): Promise<T> => (await emulator.invokeOk(functionId(name), event)).payload as T;

  beforeAll(async () => {
    // LAMBDA_TEST_CDK_OUT reuses an assembly already synthesized (while working on this test);
    // by default the stack is synthesized here, as `cdk deploy` would.
    stack = await startEmulatedStack(process.env.LAMBDA_TEST_CDK_OUT ?? (await synthesize()));
    emulator = stack.emulator;
    ({ apiKey } = await stack.createKey('pro'));
    console.info(`Lambda emulation isolation: ${isolationAvailable()}`);
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
    if (stack && !process.env.LAMBDA_TEST_CDK_OUT) rmSync(stack.outdir, { recursive: true, force: true });
  });

  test('the sandbox is Lambda’s: read-only task root and layer, a private /tmp, a non-root uid, the layer found through NODE_PATH only', async () => {
    // A probe function of the test's own, in an environment as every function gets, with the Chromium layer.
    const probeDir = mkdtempSync(join(tmpdir(), 'pdf-api-lambda-probe-'));
    chmodSync(probeDir, 0o755);
    writeFileSync(
      join(probeDir, 'index.mjs'),
      `import { writeFileSync, readdirSync } from 'node:fs';
       const tries = (fn) => { try { fn(); return true; } catch { return false; } };
       export const handler = async () => ({
         tmpEntries: readdirSync('/tmp'),
         uid: process.getuid(),
         writesTaskRoot: tries(() => writeFileSync(process.env.LAMBDA_TASK_ROOT + '/x', 'x')),
         writesLayer: tries(() => writeFileSync(process.env.NODE_PATH.split(':')[1] + '/x', 'x')),
         writesTmp: tries(() => writeFileSync('/tmp/x', 'x')),
         chromiumFromLayer: typeof (await import('@sparticuz/chromium')).default.executablePath,
         vitestFromProject: await import('vitest').then(() => true, () => false),
       });`,
    );
    const environment = new LambdaEnvironment(
      { ...emulator.spec(functionId('render')), timeoutSeconds: 30, name: 'probe', handler: 'index.handler', codeDir: probeDir },
      { stage: stack.stage },
    );
    try {
      await environment.start();
      const { outcome } = await environment.invoke({});
      expect(outcome, environment.output.join('')).toMatchObject({ ok: true });
      const seen = (outcome as { payload: Record<string, unknown> }).payload;
      // Wherever the machine allows a sandbox, all of it; without one, what still holds.
      expect(seen).toMatchObject({ writesTmp: true, chromiumFromLayer: 'function', vitestFromProject: false });
      if (isolationAvailable() !== 'none') {
        expect(seen).toMatchObject({ writesTaskRoot: false, writesLayer: false, tmpEntries: [] });
        if (isolationAvailable() === 'mount-namespace') expect(seen.uid).toBe(993);
      }
    } finally {
      await environment.stop();
      rmSync(probeDir, { recursive: true, force: true });
    }
  });

  test('health: the table and the bucket answer', async () => {
    const result = await invoke('health', readEvent('health'));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toMatchObject({ status: 'ok', checks: { table: 'ok', bucket: 'ok' } });
  });

  test('site, fallback and the authentication errors answer in the API’s shapes', async () => {
    // The OpenAPI document, built from the schemas inside the bundle; the docs page from the files copied beside it.
    const site = await invoke('site', readEvent('site'));
    expect(site.statusCode).toBe(200);
    expect(bodyOf(site)).toMatchObject({ openapi: expect.stringMatching(/^3\.1/), paths: expect.objectContaining({ '/v1/pdf/generate': expect.any(Object) }) });
    const siteEvent = readEvent('site');
    const docs = await invoke('site', { ...siteEvent, path: '/docs', resource: '/docs', requestContext: { ...siteEvent.requestContext, resourcePath: '/docs' } });
    expect(docs.statusCode).toBe(200);
    expect(docs.body).toContain('<!doctype html>');
    const fallback = await invoke('fallback', readEvent('fallback'));
    expect(fallback.statusCode).toBe(404);
    expect(bodyOf(fallback).error.code).toBe('not_found');
    for (const name of ['generate', 'usage']) {
      const event = readEvent(name);
      expect(event.headers.Authorization).toBe(`Bearer ${PLACEHOLDER_KEY}`);
      const refused = await invoke(name, event);
      expect(refused.statusCode, name).toBe(401);
      expect(bodyOf(refused).error.code).toBe('unauthorized');
    }
  });

  test('generate renders with Chromium from the layer; the record reads back; the link downloads the PDF from the bucket', async () => {
    const generated = await invoke('generate', withKey(readEvent('generate'), apiKey));
    expect(generated.statusCode, generated.body).toBe(200);
    const record = bodyOf(generated);
    expect(record).toMatchObject({ id: expect.stringMatching(/^pdf_/), pages: 1, format: 'A4' });
    // The link-signing secret came from Secrets Manager, by the ARN in the template.
    expect(stack.secrets.asked).toContain(LINK_SECRET_ARN);

    const fetched = await invoke('pdfs', withKey(withPdf(readEvent('pdfs'), record.id), apiKey));
    expect(bodyOf(fetched)).toMatchObject({ id: record.id, size: record.size });
    const link = new URL(record.url);
    const redirected = await invoke('files', withPdf(readEvent('files'), record.id, Object.fromEntries(link.searchParams)));
    expect(redirected.statusCode).toBe(302);
    const download = await fetch(String(redirected.headers?.Location));
    expect(download.status).toBe(200);
    const pdf = await readPdf(new Uint8Array(await download.arrayBuffer()));
    expect(normalizeText(pdf.text)).toContain('Invoice 42');
    expect(normalizeText(pdf.text)).toContain('Page 1 of 1');
  });

  test('generate refuses a bad request with 400 and charges nothing', async () => {
    const refused = await invoke('generate', withBody(withKey(readEvent('generate'), apiKey), { html: '<p>x</p>', format: 'A9000' }));
    expect(refused.statusCode).toBe(400);
    expect(bodyOf(refused).error.code).toBe('invalid_request');
  });

  test('batch fans out to the render function’s own environments through the Invoke API, one result per item', async () => {
    const before = emulator.invocations.filter((i) => i.functionName === functionId('render')).length;
    const result = await invoke('batch', withKey(readEvent('batch'), apiKey));
    expect(result.statusCode, result.body).toBe(200);
    const body = bodyOf(result);
    expect(body).toMatchObject({ success: true, total: 2, successful: 2, failed: 0 });
    expect(body.results.map((r: { metadata: unknown }) => r.metadata)).toEqual([{ reference_id: 'inv-1' }, { reference_id: 'inv-2' }]);
    const renders = emulator.invocations.filter((i) => i.functionName === functionId('render')).slice(before);
    expect(renders.map((r) => r.outcome.ok)).toEqual([true, true]);
    const landscape = await readPdf(new Uint8Array(await (await fetch(await downloadUrl(body.results[1].pdf_id, body.results[1].download_url))).arrayBuffer()));
    expect(Math.round(landscape.pages[0]!.width)).toBe(792);
  });

  test('usage counts exactly the PDFs stored', async () => {
    const result = await invoke('usage', withKey(readEvent('usage'), apiKey));
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toMatchObject({ tier: 'pro', quota_used: 3 });
  });

  test('an async generate runs in the job function’s environment (an Event invoke) and jobs reads its result', async () => {
    const event = withKey(readEvent('generate'), apiKey);
    const submitted = await invoke('generate', withBody(event, { ...JSON.parse(event.body!), async: true }));
    expect(submitted.statusCode, submitted.body).toBe(202);
    const jobId = bodyOf(submitted).job_id as string;
    const jobEvent = withKey(readEvent('jobs'), apiKey);
    let job: { status: string; result?: { pages: number } } = { status: 'queued' };
    for (const started = Date.now(); Date.now() - started < 90_000 && !['succeeded', 'failed'].includes(job.status); ) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      job = bodyOf(await invoke('jobs', { ...jobEvent, path: `/prod/v1/jobs/${jobId}`, pathParameters: { job_id: jobId } }));
    }
    expect(job, emulator.output(functionId('job')).slice(-4000)).toMatchObject({ status: 'succeeded', result: { pages: 1 } });
    expect(emulator.invocations.some((i) => i.functionName === functionId('job') && i.outcome.ok)).toBe(true);
    // The request waited sealed: its data key wrapped by generate, unwrapped by the job function, for this job's object only.
    const uses = stack.kms.calls.filter((call) => call.encryptionContext?.job_request?.endsWith(`/${jobId}.json`));
    expect(uses.map((call) => call.operation)).toEqual(['Encrypt', 'Decrypt']);
  }, 120_000);

  test('the scheduled functions answer their scheduled events', async () => {
    expect(await invoke('reconcile', readEvent('reconcile'))).toEqual({ repaired: expect.any(Number), returned: expect.any(Number), charged: expect.any(Number), abandonedJobs: 0 });
    expect(await invoke('webhooks', readEvent('webhooks'))).toEqual({ tried: 0 });
    // And reconcile as the job failures queue's event source mapping invokes it.
    expect(await invoke('reconcile', readEvent('reconcile-job-failures'))).toEqual({ batchItemFailures: [] });
  });

  test('every function of the stack was started, cold, from its own asset, and answered', () => {
    const started = new Set(emulator.invocations.filter((i) => i.coldStart).map((i) => i.functionName));
    for (const name of [...API_FUNCTIONS, ...INTERNAL_FUNCTIONS]) expect(started.has(functionId(name)), name).toBe(true);
    for (const invocation of emulator.invocations.filter((i) => i.coldStart)) {
      console.info(`${invocation.functionName}: init ${Math.round(invocation.initMs ?? 0)} ms, first invocation ${Math.round(invocation.durationMs)} ms${FUNCTION_PROFILES[invocation.functionName.replace(/Function$/, '').replace(/^./, (c) => c.toLowerCase()) as keyof typeof FUNCTION_PROFILES]?.chromium ? ' (Chromium)' : ''}`);
    }
  });

  /** A batch item's download link, followed to the bucket by the files function. */
  async function downloadUrl(pdfId: string, link: string): Promise<string> {
    const redirected = await invoke('files', withPdf(readEvent('files'), pdfId, Object.fromEntries(new URL(link).searchParams)));
    expect(redirected.statusCode).toBe(302);
    return String(redirected.headers?.Location);
  }
});
