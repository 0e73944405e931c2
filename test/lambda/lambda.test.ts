/**
 * The stack runs as Lambda runs it: `npx cdk synth`, then every function's asset from `cdk.out` in
 * Lambda-like execution environments (emulator/environment.ts: read-only task root, the layer
 * read-only at a root of its own reached through NODE_PATH, a private /tmp of the configured size,
 * Lambda's uid and variables, AWS's own runtime interface client against a Runtime API served
 * here), with the template's environment pointed at the local stand-ins (dynalite, s3rver, a
 * Secrets Manager and a Lambda Invoke API of the emulator's own). Each function answers its sample
 * event from events/; the batch fans out to the render function's environments and generate's
 * job runs in the job function's, through the functions' own SDK calls. Environments are frozen
 * between invocations, as Lambda freezes them.
 *
 * Lambda's limits (account and reserved concurrency, throttled invokes, Event invokes waiting in
 * the queue, freezing) are shown on probe functions of the test's own, which hold as long as asked.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { InvokeCommand, LambdaClient, TooManyRequestsException as SdkTooManyRequests } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { synthesizedAssembly } from './assembly.ts';
import { API_FUNCTIONS, FUNCTION_PROFILES, INTERNAL_FUNCTIONS } from '#lib/api/routes.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';
import { normalizeText, readPdf } from '../support/pdf.ts';
import { readSignature, verifyCms } from '../support/test-ca.ts';
import { bodyOf, PLACEHOLDER_KEY, readEvent, withBody, withKey, withPdf } from '../support/sample-events.ts';
import { isolationAvailable, LambdaEnvironment, makeStage, processState } from './emulator/environment.ts';
import { LambdaEmulator, type Template } from './emulator/emulator.ts';
import { LINK_SECRET_ARN, startEmulatedStack, type EmulatedStack } from './emulator/stack.ts';

describe('every function from cdk.out, run as Lambda runs it', () => {
  let stack: EmulatedStack;
  let emulator: LambdaEmulator;
  let apiKey: string;

  /** Invokes a function by its name in routes.ts; its answer, or the test fails with its logs. */
  const invoke = async <T = APIGatewayProxyResult>(name: string, event: unknown): Promise<T> => (await emulator.invokeOk(functionId(name), event)).payload as T;

  beforeAll(async () => {
    // The stack synthesized as `cdk deploy` would (test/lambda/global-setup.ts).
    stack = await startEmulatedStack((await synthesizedAssembly()).outdir);
    emulator = stack.emulator;
    ({ apiKey } = await stack.createKey('pro'));
    console.info(`Lambda emulation isolation: ${isolationAvailable()}`);
  }, 300_000);

  afterAll(async () => {
    await stack?.stop();
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

  test('a warm environment is frozen between invocations, Chromium included, and answers the next', async () => {
    const [environment] = emulator.environments(functionId('generate'));
    await environment?.whenFrozen();
    expect(environment?.isFrozen).toBe(true);
    const processes = await environment!.processIds();
    const chromium = processes.filter((pid) => commandOf(pid).includes('chrom'));
    // The browser and its renderers (a process group of their own) are stopped with the runtime. A
    // child that exited just before the freeze stays a zombie (Z) until its frozen parent reaps it:
    // it runs nothing either (seen with one core busy: a helper of Chromium's, its command line gone).
    expect(chromium.length).toBeGreaterThan(1);
    expect(processes.map((pid) => [commandOf(pid).slice(0, 60), processState(pid)]).filter(([, state]) => state !== undefined && state !== 'T' && state !== 'Z')).toEqual([]);
    const from = environment!.lifecycle.length;
    const generated = await emulator.invokeOk(functionId('generate'), withKey(readEvent('generate'), apiKey));
    expect(generated.record.coldStart).toBe(false);
    expect((generated.payload as APIGatewayProxyResult).statusCode).toBe(200);
    await environment!.whenFrozen();
    expect(environment!.isFrozen).toBe(true);
    // Its process registered its internal extension at init, which prepares the next workspace after
    // the answer: the freeze came only once it had asked for its next event (lib/aws/post-answer-work.ts).
    expect(environment!.lifecycle).toContainEqual({ step: 'extension-registered', extension: 'pdf-api-workspaces' });
    const steps = environment!.lifecycle.slice(from).map(({ step }) => step);
    expect(steps.at(-1)).toBe('frozen');
    expect(steps.indexOf('invoke')).toBeLessThan(steps.indexOf('extension-next'));
    expect(steps.indexOf('runtime-answered')).toBeLessThan(steps.indexOf('frozen'));
    const report = await generated.record.report!;
    expect(report.billedDurationMs).toBe(Math.ceil(report.runtimeDurationMs + report.postRuntimeExtensionsDurationMs));
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
    expect(bodyOf(result)).toMatchObject({ tier: 'pro', quota_used: 4 });
  });

  test('an async generate runs in the job function’s environment (an Event invoke) and jobs reads its result', async () => {
    const event = withKey(readEvent('generate'), apiKey);
    const submitted = await invoke('generate', withBody(event, { ...JSON.parse(event.body!), async: true }));
    expect(submitted.statusCode, submitted.body).toBe(202);
    const jobId = bodyOf(submitted).job_id as string;
    const job = await jobEnded(jobId);
    expect(job, emulator.output(functionId('job')).slice(-4000)).toMatchObject({ status: 'succeeded', result: { pages: 1 } });
    // The job is marked done before its invocation answers: its record comes a moment later.
    const answered = () => emulator.invocations.some((i) => i.functionName === functionId('job') && i.outcome.ok);
    for (const started = Date.now(); Date.now() - started < 10_000 && !answered(); ) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(answered()).toBe(true);
    // The request waited sealed: its data key wrapped by generate, unwrapped by the job function, for this job's object only.
    const uses = stack.kms.calls.filter((call) => call.encryptionContext?.job_request?.endsWith(`/${jobId}.json`));
    expect(uses.map((call) => call.operation)).toEqual(['Encrypt', 'Decrypt']);
  }, 120_000);

  test('templates: stored by the templates function, previewed as PDF bytes by the preview function, rendered with data by generate', async () => {
    // The sample event creates the template it shows.
    const created = await invoke('templates', withKey(readEvent('templates'), apiKey));
    expect(created.statusCode, created.body).toBe(201);
    const template = bodyOf(created);
    expect(template).toMatchObject({ template_id: expect.stringMatching(/^tpl_/), version: 1, name: 'Invoice' });

    // The preview's sample event sends its body base64-encoded, as API Gateway passes it; it answers the PDF base64-encoded.
    const previewEvent = withKey(readEvent('preview'), apiKey);
    const preview = await invoke('preview', {
      ...previewEvent,
      path: previewEvent.path.replace(/tpl_\w+/, template.template_id),
      pathParameters: { template_id: template.template_id },
    });
    expect(preview.statusCode, preview.body.slice(0, 300)).toBe(200);
    expect(preview.isBase64Encoded).toBe(true);
    expect(preview.headers?.['Content-Type']).toBe('application/pdf');
    const previewed = await readPdf(new Uint8Array(Buffer.from(preview.body, 'base64')));
    expect(normalizeText(previewed.text)).toContain('Invoice 2026-002');
    expect(normalizeText(previewed.text)).toContain('Page 1 of 1');

    const generated = await invoke('generate', withBody(withKey(readEvent('generate'), apiKey), { template_id: template.template_id, data: { number: 'L-7', total: 5 } }));
    expect(generated.statusCode, generated.body).toBe(200);
    expect(bodyOf(generated)).toMatchObject({ template_id: template.template_id, template_version: 1, pages: 1 });
  }, 120_000);

  test('signatures: the signingKeys function makes a key in KMS (the stand-in) with a self-signed certificate; generate, a batch of 10 (each item in a render environment), a template and an async job sign with it, each a valid PAdES signature', async () => {
    const key = await signingKey();
    const signature = { signing_key_id: key.signing_key_id, reason: 'Lambda' };

    const generated = await invoke('generate', withBody(withKey(readEvent('generate'), apiKey), { html: '<h1>Signed in Lambda</h1>', signature }));
    expect(generated.statusCode, generated.body).toBe(200);
    const record = bodyOf(generated) as { id: string; url: string; signed?: boolean };
    expect(record.signed).toBe(true);
    await expectSigned(record.id, record.url, key);

    const rendersBefore = emulator.invocations.filter((i) => i.functionName === functionId('render')).length;
    const items = Array.from({ length: 10 }, (_, i) => ({ html: `<h1>Signed item ${i + 1}</h1>`, options: { signature }, metadata: { n: i + 1 } }));
    const batch = await invoke('batch', withBody(withKey(readEvent('batch'), apiKey), { pdfs: items }));
    expect(batch.statusCode, batch.body).toBe(200);
    const batchBody = bodyOf(batch) as { successful: number; results: { success: boolean; pdf_id: string; download_url: string; metadata: unknown }[] };
    expect(batchBody.successful, batch.body.slice(0, 2000)).toBe(10);
    expect(batchBody.results.map((result) => result.metadata)).toEqual(items.map((item) => item.metadata));
    expect(emulator.invocations.filter((i) => i.functionName === functionId('render')).length - rendersBefore).toBe(10);
    for (const result of batchBody.results) await expectSigned(result.pdf_id, result.download_url, key);

    const template = bodyOf(await invoke('templates', withKey(readEvent('templates'), apiKey))) as { template_id: string };
    const filled = await invoke('generate', withBody(withKey(readEvent('generate'), apiKey), { template_id: template.template_id, data: { number: 'S-1', total: 7 }, signature }));
    expect(filled.statusCode, filled.body).toBe(200);
    const filledRecord = bodyOf(filled) as { id: string; url: string; signed?: boolean };
    expect(filledRecord.signed).toBe(true);
    await expectSigned(filledRecord.id, filledRecord.url, key);

    const submitted = await invoke('generate', withBody(withKey(readEvent('generate'), apiKey), { html: '<h1>Signed later</h1>', signature, async: true }));
    expect(submitted.statusCode, submitted.body).toBe(202);
    const job = await jobEnded(bodyOf(submitted).job_id as string);
    expect(job, emulator.output(functionId('job')).slice(-4000)).toMatchObject({ status: 'succeeded', result: { signed: true } });
    const result = (job as { result: { id: string; url: string } }).result;
    await expectSigned(result.id, result.url, key);
  }, 240_000);

  test('a bulk job: uploads presigns the PUT, bulk queues its chunks on the bulk queue, whose event source mapping runs the bulk worker; jobs shows it done', async () => {
    const upload = await invoke('uploads', withKey(readEvent('uploads'), apiKey));
    expect(upload.statusCode, upload.body).toBe(201);
    const { upload_id, url } = bodyOf(upload) as { upload_id: string; url: string };
    const { signing_key_id } = await signingKey();
    const lines = [1, 2, 3].map((n) => JSON.stringify({ html: `<h1>Bulk invoice ${n}</h1>`, options: { signature: { signing_key_id } }, metadata: { n } }));
    const put = await fetch(url, { method: 'PUT', body: lines.join('\n') });
    expect(put.status, await put.text()).toBe(200);
    const submitted = await invoke('bulk', withBody(withKey(readEvent('bulk'), apiKey), { upload_id }));
    expect(submitted.statusCode, submitted.body).toBe(202);
    const job = await jobEnded(bodyOf(submitted).job_id as string);
    expect(job, emulator.output(functionId('bulkWorker')).slice(-4000)).toMatchObject({ status: 'succeeded', total: 3, succeeded: 3, failed: 0 });
    // Each line signed in the bulk worker's environment, with the key's KMS key.
    const jobId = bodyOf(submitted).job_id as string;
    expect((job as { result: { manifest_url: string } }).result.manifest_url).toMatch(new RegExp(`/v1/jobs/${jobId}/manifest$`));
    const manifestLink = await invoke('jobs', { ...withKey(readEvent('jobs'), apiKey), resource: '/v1/jobs/{job_id}/manifest', path: `/prod/v1/jobs/${jobId}/manifest`, pathParameters: { job_id: jobId } });
    expect(manifestLink.statusCode, manifestLink.body).toBe(302);
    const manifest = (await (await fetch(String(manifestLink.headers?.Location))).text()).trim().split('\n').map((line) => JSON.parse(line) as { pdf_id: string; download_url: string });
    expect(manifest).toHaveLength(3);
    for (const line of manifest) await expectSigned(line.pdf_id, line.download_url, await signingKey());
    expect(emulator.invocations.some((i) => i.functionName === functionId('bulkWorker') && i.outcome.ok)).toBe(true);
  }, 120_000);

  test('the scheduled functions answer their scheduled events', async () => {
    expect(await invoke('reconcile', readEvent('reconcile'))).toEqual({ repaired: expect.any(Number), returned: expect.any(Number), charged: expect.any(Number), abandonedJobs: 0, requeuedBulkJobs: 0 });
    expect(await invoke('webhooks', readEvent('webhooks'))).toEqual({ tried: 0 });
    // And reconcile as the job failures queue's event source mapping invokes it.
    expect(await invoke('reconcile', readEvent('reconcile-job-failures'))).toEqual({ batchItemFailures: [] });
  });

  test('every function of the stack was started, cold, from its own asset, and answered', () => {
    // Within the account's default concurrency nothing was throttled, and every invocation has ended.
    expect(emulator.accountConcurrency).toBe(Number(process.env.LAMBDA_ACCOUNT_CONCURRENCY ?? 1000));
    expect(emulator.throttles).toEqual([]);
    expect(emulator.running).toBe(0);
    const started = new Set(emulator.invocations.filter((i) => i.coldStart).map((i) => i.functionName));
    for (const name of [...API_FUNCTIONS, ...INTERNAL_FUNCTIONS]) expect(started.has(functionId(name)), name).toBe(true);
    for (const invocation of emulator.invocations.filter((i) => i.coldStart)) {
      console.info(`${invocation.functionName}: init ${Math.round(invocation.initMs ?? 0)} ms, first invocation ${Math.round(invocation.durationMs)} ms${FUNCTION_PROFILES[invocation.functionName.replace(/Function$/, '').replace(/^./, (c) => c.toLowerCase()) as keyof typeof FUNCTION_PROFILES]?.chromium ? ' (Chromium)' : ''}`);
    }
  });

  /** A job's state once it has ended (polled through the jobs function). */
  async function jobEnded(jobId: string): Promise<Record<string, unknown>> {
    const jobEvent = withKey(readEvent('jobs'), apiKey);
    let job: Record<string, unknown> = { status: 'queued' };
    for (const started = Date.now(); Date.now() - started < 90_000 && !['succeeded', 'failed', 'cancelled'].includes(job.status as string); ) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      job = bodyOf(await invoke('jobs', { ...jobEvent, path: `/prod/v1/jobs/${jobId}`, pathParameters: { job_id: jobId } }));
    }
    return job;
  }

  /** The key's signing key, made once by the signingKeys function (its sample event: self-signed). */
  let madeSigningKey: Promise<{ signing_key_id: string; certificate_pem: string }> | undefined;
  function signingKey(): Promise<{ signing_key_id: string; certificate_pem: string }> {
    madeSigningKey ??= (async () => {
      const created = await invoke('signingKeys', withKey(readEvent('signingKeys'), apiKey));
      expect(created.statusCode, created.body).toBe(201);
      const key = bodyOf(created) as { signing_key_id: string; status: string; certificate_pem: string };
      expect(key.status).toBe('active');
      return key;
    })();
    return madeSigningKey;
  }

  /** The PDF behind a link carries one PAdES signature over the whole file, verified against the key's certificate. */
  async function expectSigned(pdfId: string, link: string, key: { certificate_pem: string }): Promise<void> {
    const bytes = new Uint8Array(await (await fetch(await downloadUrl(pdfId, link))).arrayBuffer());
    const signature = readSignature(bytes);
    expect(signature.byteRange[2] + signature.byteRange[3], pdfId).toBe(bytes.length);
    expect(signature.dictionary, pdfId).toContain('/SubFilter /ETSI.CAdES.detached');
    expect((await verifyCms(signature.cms, signature.signed, key.certificate_pem, { selfSigned: true })).verified, pdfId).toBe(true);
  }

  /** A batch item's download link, followed to the bucket by the files function. */
  async function downloadUrl(pdfId: string, link: string): Promise<string> {
    const redirected = await invoke('files', withPdf(readEvent('files'), pdfId, Object.fromEntries(new URL(link).searchParams)));
    expect(redirected.statusCode).toBe(302);
    return String(redirected.headers?.Location);
  }
});

describe('Lambda’s limits, as the emulation holds them', () => {
  // Two functions of one asset: Holder has one reserved concurrent execution, Free draws on the
  // account's unreserved pool; the account has two, so one is left unreserved.
  const template: Template = {
    Resources: {
      Holder: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:asset:path': 'asset.probe' }, Properties: { Handler: 'index.handler', MemorySize: 128, Timeout: 30, ReservedConcurrentExecutions: 1 } },
      Free: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:asset:path': 'asset.probe' }, Properties: { Handler: 'index.handler', MemorySize: 128, Timeout: 30 } },
      // The same probe with an internal extension of its own (PROBE_EXTENSION): it does the work an
      // invocation leaves at its answer, then asks for its next event.
      Extended: { Type: 'AWS::Lambda::Function', Metadata: { 'aws:asset:path': 'asset.probe' }, Properties: { Handler: 'index.handler', MemorySize: 128, Timeout: 30, Environment: { Variables: { PROBE_EXTENSION: '1' } } } },
      FreeEventInvokeConfig: { Type: 'AWS::Lambda::EventInvokeConfig', Properties: { FunctionName: { Ref: 'Free' }, MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 } },
    },
  };
  let outdir: string;
  let stage: string;
  let emulator: LambdaEmulator;
  let endpoint: string;

  /** The Invoke API's raw answer, as any client reads it. */
  const invokeRaw = async (name: string, event: unknown, type: 'RequestResponse' | 'Event' = 'RequestResponse') => {
    const response = await fetch(`${endpoint}/2015-03-31/functions/${name}/invocations`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Amz-Invocation-Type': type },
      body: JSON.stringify(event),
    });
    return { status: response.status, errorType: response.headers.get('x-amzn-ErrorType'), body: await response.text() };
  };

  beforeAll(async () => {
    outdir = mkdtempSync(join(tmpdir(), 'pdf-api-lambda-limits-'));
    mkdirSync(join(outdir, 'asset.probe'));
    chmodSync(outdir, 0o755);
    chmodSync(join(outdir, 'asset.probe'), 0o755);
    // Holds for holdMs; counts its invocations (a warm environment keeps its globals); on `spawn`,
    // leaves a process of its own session behind; on `tick`, a timer that counts while it may run.
    // With PROBE_EXTENSION, an internal extension registered at init does `workMs` of work after the
    // answer (counted in `worked`) before it asks for its next event; `registerLate` tries to
    // register another one after init.
    writeFileSync(
      join(outdir, 'asset.probe', 'index.mjs'),
      `import { spawn } from 'node:child_process';
       const extensions = \`http://\${process.env.AWS_LAMBDA_RUNTIME_API}/2020-01-01/extension\`;
       const ends = new Map();
       const endOf = (id) => {
         if (!ends.has(id)) { let end; ends.set(id, { ended: new Promise((resolve) => (end = resolve)), end: () => end() }); }
         return ends.get(id);
       };
       if (process.env.PROBE_EXTENSION) {
         const registered = await fetch(\`\${extensions}/register\`, { method: 'POST', headers: { 'Lambda-Extension-Name': 'probe-extension' }, body: JSON.stringify({ events: ['INVOKE'] }) });
         const id = registered.headers.get('lambda-extension-identifier');
         void (async () => {
           for (;;) {
             const event = await (await fetch(\`\${extensions}/event/next\`, { headers: { 'Lambda-Extension-Identifier': id } })).json();
             await endOf(event.requestId).ended;
             await globalThis.afterAnswer;
             globalThis.afterAnswer = undefined;
           }
         })();
       }
       export const handler = async (event, context) => {
         try {
           return await probe(event);
         } finally {
           endOf(context.awsRequestId).end();
         }
       };
       const probe = async (event) => {
         globalThis.count = (globalThis.count ?? 0) + 1;
         const worked = globalThis.worked ?? 0;
         if (event.workMs) globalThis.afterAnswer = new Promise((resolve) => setTimeout(() => resolve(void (globalThis.worked = worked + 1)), event.workMs));
         const lateRegistration = event.registerLate ? (await fetch(\`\${extensions}/register\`, { method: 'POST', headers: { 'Lambda-Extension-Name': 'late' }, body: JSON.stringify({ events: ['INVOKE'] }) })).status : null;
         if (event.spawn && !globalThis.child) {
           const child = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
           // A spawn that fails is reported, not thrown later as an uncaught 'error' that ends the runtime.
           child.on('error', (error) => console.error('spawn failed', error));
           globalThis.child = child.pid;
         }
         if (event.tick && !globalThis.ticker) { globalThis.ticks = 0; globalThis.ticker = setInterval(() => globalThis.ticks++, 10); }
         if (event.holdMs) await new Promise((resolve) => setTimeout(resolve, event.holdMs));
         return { count: globalThis.count, child: globalThis.child ?? null, ticks: globalThis.ticks ?? null, worked, lateRegistration };
       };`,
    );
    mkdirSync('/var/tmp', { recursive: true });
    stage = makeStage(mkdtempSync('/var/tmp/pdf-api-lambda-limits-stage-'));
    chmodSync(stage, 0o755);
    emulator = new LambdaEmulator({
      outdir,
      template,
      stage,
      resolveRef: (id, type) => {
        throw new Error(`the probe template refers to nothing (${type} ${id})`);
      },
      platformVariables: { AWS_REGION: 'us-east-1' },
      accountConcurrency: 2,
    });
    endpoint = await emulator.start();
  }, 60_000);

  afterAll(async () => {
    await emulator?.stop();
    for (const dir of [outdir, stage]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('reserved concurrency is read from the template', () => {
    expect(emulator.reservedConcurrency('Holder')).toBe(1);
    expect(emulator.reservedConcurrency('Free')).toBeUndefined();
  });

  test('an invoke past the account’s concurrency is answered 429 TooManyRequestsException, as the Lambda API answers it', async () => {
    // Prepare: both environments started, so what follows is about concurrency, not start-up.
    await Promise.all([invokeRaw('Free', {}), invokeRaw('Holder', {})]);
    // Act: two at once of a function that holds, with one unreserved execution left in the account.
    const [first, second] = await Promise.all([invokeRaw('Free', { holdMs: 1_500 }), new Promise((resolve) => setTimeout(resolve, 300)).then(() => invokeRaw('Free', {}))]);
    // Assess
    expect(first.status).toBe(200);
    expect(second).toEqual({ status: 429, errorType: 'TooManyRequestsException', body: expect.any(String) });
    expect(JSON.parse(second.body)).toEqual({ Reason: 'ConcurrentInvocationLimitExceeded', Type: 'User', message: 'Rate Exceeded.' });
    // Once it answered, its execution is free again.
    expect((await invokeRaw('Free', {})).status).toBe(200);
  });

  test('an invoke past a function’s reserved concurrency is refused with its own Reason, and the AWS SDK reads it so', async () => {
    const client = new LambdaClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
    const holding = invokeRaw('Holder', { holdMs: 1_500 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await client.send(new InvokeCommand({ FunctionName: 'Holder', Payload: Buffer.from('{}') })).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SdkTooManyRequests);
    expect(refused).toMatchObject({ Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded', Type: 'User', $metadata: { httpStatusCode: 429 } });
    // Holder's reservation is its own: the unreserved pool still runs Free meanwhile.
    const free = await client.send(new InvokeCommand({ FunctionName: 'Free', Payload: Buffer.from('{}') }));
    expect(free.StatusCode).toBe(200);
    expect((await holding).status).toBe(200);
    client.destroy();
  });

  test('a throttled Event invoke waits in the queue and runs once there is room', async () => {
    const before = emulator.invocations.filter((i) => i.functionName === 'Free').length;
    const holding = invokeRaw('Free', { holdMs: 1_500 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Accepted at once whatever the concurrency, as Lambda accepts it into its queue.
    expect((await invokeRaw('Free', { queued: true }, 'Event')).status).toBe(202);
    await holding;
    for (const started = Date.now(); Date.now() - started < 10_000 && emulator.invocations.filter((i) => i.functionName === 'Free').length < before + 2; ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Throttled (once or more, backing off from a second) while Free held the account's last execution.
    const throttled = emulator.throttles.filter((t) => t.invocationType === 'Event');
    expect(throttled.length).toBeGreaterThan(0);
    expect(new Set(throttled.map((t) => `${t.functionName} ${t.reason}`))).toEqual(new Set(['Free ConcurrentInvocationLimitExceeded']));
    expect(emulator.invocations.filter((i) => i.functionName === 'Free').slice(before).map((i) => i.outcome.ok)).toEqual([true, true]);
    expect(emulator.givenUp).toEqual([]);
  });

  test('an environment is frozen from its answer (once its runtime asks for the next event) to its next invocation: every process stopped, its timers idle, and it answers the next', async () => {
    // Prepare: the warm environment leaves a process of another session behind and starts a timer.
    const answer = await invokeRaw('Holder', { spawn: true, tick: true });
    const [environment] = emulator.environments('Holder');
    // What a failure shows: the answer and what the function printed (an environment gone is one whose runtime exited).
    const shown = `${answer.status} ${answer.body}\n${emulator.output('Holder').slice(-4000)}`;
    expect(answer.status, shown).toBe(200);
    expect(environment, shown).toBeDefined();
    const first = JSON.parse(answer.body) as { count: number; child: number; ticks: number };
    expect(first.child, shown).toEqual(expect.any(Number));
    await environment!.whenFrozen();
    // Assess: frozen once the runtime asked for its next event, as Lambda freezes (never between
    // its answer and that request); the whole tree is stopped (state T), the runtime and its detached child alike.
    expect(environment!.frozeWithRuntimeWaiting).toBe(true);
    const processes = await environment!.processIds();
    expect(processes).toContain(first.child);
    expect(processes.map((pid) => processState(pid)).filter((state) => state !== undefined && state !== 'T')).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(processState(first.child)).toBe('T');
    // Act: the next invocation thaws it; its timer ran only while it was running (not 50 ticks in 500 ms).
    const next = JSON.parse((await invokeRaw('Holder', {})).body) as { count: number; child: number; ticks: number };
    expect(next.count).toBe(first.count + 1);
    expect(next.child).toBe(first.child);
    expect(next.ticks).toBeLessThan(10);
    await environment!.whenFrozen();
    expect(processState(first.child)).toBe('T');
  });

  test('an internal extension holds the freeze after the answer: the caller has the answer first, the freeze comes after the extension’s work, reported as post-runtime time and billed', async () => {
    // Prepare: a cold start, whose init ended only once the extension had registered and asked for its first event.
    expect((await invokeRaw('Extended', {})).status).toBe(200);
    const [environment] = emulator.environments('Extended');
    await environment!.whenFrozen();
    const init = environment!.lifecycle.map(({ step }) => step);
    expect(init[0]).toBe('extension-registered');
    expect(init.indexOf('init-done')).toBeGreaterThan(Math.max(init.indexOf('runtime-next'), init.indexOf('extension-next')));
    const from = environment!.lifecycle.length;
    // Act: an invocation that leaves work for the extension.
    const record = await emulator.invokeOk('Extended', { workMs: 300 });
    // Assess: the answer came before that work was done (it reports none done yet) ...
    expect(record.payload).toMatchObject({ worked: 0 });
    await environment!.whenFrozen();
    const steps = environment!.lifecycle.slice(from).map(({ step }) => step);
    // ... and the environment froze only after the extension asked for its next event, once the work was done.
    expect(steps[0]).toBe('thawed');
    expect(steps.at(-1)).toBe('frozen');
    expect(steps.indexOf('invoke')).toBeLessThan(steps.indexOf('runtime-answered'));
    expect(steps.indexOf('runtime-answered')).toBeLessThan(steps.indexOf('extension-next'));
    expect(steps.filter((step) => step === 'frozen')).toHaveLength(1);
    const report = await record.record.report!;
    expect(report.postRuntimeExtensionsDurationMs).toBeGreaterThan(0);
    expect(report.durationMs).toBe(report.runtimeDurationMs + report.postRuntimeExtensionsDurationMs);
    expect(report.billedDurationMs).toBe(Math.ceil(report.durationMs));
    // The work is there at the next invocation; registering after init is refused.
    const next = await emulator.invokeOk('Extended', { registerLate: true });
    expect(next.payload).toMatchObject({ worked: 1, lateRegistration: 403 });
  });
});

/** A process's command line, or '' once it is gone. */
function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}
