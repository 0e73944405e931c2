/**
 * `npx cdk synth` works on this machine, offline and without Docker, exactly as a user runs it
 * before `cdk deploy` or `sam local invoke`: cdk-nag and CloudFormation's validation pass, every
 * function is bundled by the local esbuild as an ES module, and the Chromium layer carries the
 * browser and everything @sparticuz/chromium needs to load.
 *
 * The assembly read here is the one the Lambda emulation runs (test/lambda/global-setup.ts
 * synthesizes it once for the project): what these tests check is what the emulation starts.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliDecompressSync, zstdDecompressSync } from 'node:zlib';
import { beforeAll, describe, expect, test } from 'vitest';
import { synthesizedAssembly } from './assembly.ts';
import { API_FUNCTIONS, FUNCTION_PROFILES, INTERNAL_FUNCTIONS } from '#lib/api/routes.ts';
import { PACKED_CHROMIUM_FILE } from '#lib/render/chromium-packing.ts';
import { bundledFontFiles, FONT_BUNDLE_PATHS, locateBundledFile } from '#lib/render/fonts.ts';
import { PDFJS_BUNDLE_PATHS } from '#lib/render/pdfjs-files.ts';
import { SITE_ASSETS, SITE_ASSETS_DIR } from '#lib/site/assets.ts';
import { CREATE_REQUIRE_BANNER } from '../../cdk/bundling.ts';
import { BUNDLED_WORKER_NAME } from '#lib/customer-code/worker-file.ts';
import { BUNDLED_UPLOAD_CHECK_WORKER_NAME } from '#lib/bulk/upload-check-worker-file.ts';
import { BUNDLED_FINISHING_WORKER_NAME, BUNDLED_MERGE_WORKER_NAME } from '#lib/documents/pdf-worker-files.ts';
import { functionId, SECRETS_MANAGER_CLIENT } from '../../cdk/constructs/service-function.ts';
import { PROJECT_ROOT, STACK_NAME } from '../../cdk/stack.ts';

const run = promisify(execFile);
const ALL_FUNCTIONS = [...API_FUNCTIONS, ...INTERNAL_FUNCTIONS];

/** Lambda's limit on a function's unzipped code, its layers included: 250 MB (262,144,000 bytes). */
const LAMBDA_UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024;

/** Bytes of every file under a directory, as Lambda counts an unzipped package. */
function treeBytes(dir: string): number {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + statSync(join(entry.parentPath, entry.name)).size, 0);
}

describe('npx cdk synth', () => {
  let outdir: string;
  let template: {
    Resources: Record<string, { Type: string; Metadata?: Record<string, string>; Properties?: { Layers?: { Ref: string }[] } }>;
  };
  /** The bundled asset directory of a resource, from the metadata SAM also reads. */
  const assetDir = (logicalId: string) => join(outdir, template.Resources[logicalId]!.Metadata!['aws:asset:path']!);
  const layerDir = () => {
    const [id] = Object.entries(template.Resources).find(([, r]) => r.Type === 'AWS::Lambda::LayerVersion')!;
    return assetDir(id);
  };

  let synthMs: number;

  beforeAll(async () => {
    ({ outdir, synthMs } = await synthesizedAssembly());
    template = JSON.parse(readFileSync(join(outdir, `${STACK_NAME}.template.json`), 'utf8'));
  });

  test('succeeds with cdk-nag and CloudFormation validation reporting nothing', () => {
    console.info(`cdk synth with bundling took ${synthMs} ms`);
    const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as { pluginReports: { violations: unknown[] }[] };
    expect(report.pluginReports.flatMap((r) => r.violations)).toEqual([]);
  });

  test.each(ALL_FUNCTIONS)('%s is one ES module bundle with a require shim', (name) => {
    const bundle = readFileSync(join(assetDir(functionId(name)), 'index.mjs'), 'utf8');
    expect(bundle.startsWith(CREATE_REQUIRE_BANNER)).toBe(true);
    expect(bundle).toMatch(/export\s*\{[^}]*\bhandler\b/);
  });

  test.each(ALL_FUNCTIONS)('%s carries the customer-code worker bundle exactly when its bundle starts one', (name) => {
    const dir = assetDir(functionId(name));
    const startsOne = readFileSync(join(dir, 'index.mjs'), 'utf8').includes(BUNDLED_WORKER_NAME);
    expect(existsSync(join(dir, BUNDLED_WORKER_NAME))).toBe(startsOne);
  });

  test('the functions that fill or save templates start customer-code workers, whose bundle loads on its own and fills one', async () => {
    // Prepare
    const carriers = ALL_FUNCTIONS.filter((name) => existsSync(join(assetDir(functionId(name)), BUNDLED_WORKER_NAME)));
    const worker = join(assetDir(functionId('templates')), BUNDLED_WORKER_NAME);
    const script = `
      import { Worker } from 'node:worker_threads';
      const worker = new Worker(${JSON.stringify(worker)}, { env: {} });
      worker.on('message', (message) => {
        if (message.type === 'ready') worker.postMessage({ kind: 'fill-template', sources: { html: '<p>{{ total | currency: "EUR" }}</p>' }, data: { total: 12.5 } });
        if (message.type === 'done' || message.type === 'failed') { console.log(JSON.stringify(message)); process.exit(0); }
      });`;

    // Act
    const scriptDir = mkdtempSync(join(tmpdir(), 'pdf-api-worker-check-'));
    writeFileSync(join(scriptDir, 'check.mjs'), script);
    const { stdout } = await run(process.execPath, [join(scriptDir, 'check.mjs')], { timeout: 60_000 }).finally(() => rmSync(scriptDir, { recursive: true, force: true }));

    // Assess
    expect(carriers).toEqual(expect.arrayContaining(['templates', 'preview', 'generate', 'render']));
    expect(JSON.parse(stdout)).toEqual({ type: 'done', outcome: { sources: { html: '<p>€12.50</p>' } } });
  });

  test.each(ALL_FUNCTIONS)('%s carries the upload-check worker bundle exactly when its bundle starts one', (name) => {
    const dir = assetDir(functionId(name));
    const startsOne = readFileSync(join(dir, 'index.mjs'), 'utf8').includes(BUNDLED_UPLOAD_CHECK_WORKER_NAME);
    expect(existsSync(join(dir, BUNDLED_UPLOAD_CHECK_WORKER_NAME))).toBe(startsOne);
  });

  test('the bulk function starts upload-check workers, whose bundle loads on its own and checks an input fed to it', async () => {
    // Prepare
    const worker = join(assetDir(functionId('bulk')), BUNDLED_UPLOAD_CHECK_WORKER_NAME);
    const script = `
      import { Worker } from 'node:worker_threads';
      const worker = new Worker(${JSON.stringify(worker)});
      worker.on('message', (message) => {
        if (message.type === 'ready') {
          worker.postMessage({ type: 'start', skipInvalid: false });
          worker.postMessage({ type: 'bytes', bytes: new TextEncoder().encode('{"html":"<p>a</p>"}\\nx\\n') });
          worker.postMessage({ type: 'end' });
        }
        if (message.type === 'done' || message.type === 'failed') { console.log(JSON.stringify(message)); process.exit(0); }
      });`;

    // Act
    const scriptDir = mkdtempSync(join(tmpdir(), 'pdf-api-worker-check-'));
    writeFileSync(join(scriptDir, 'check.mjs'), script);
    const { stdout } = await run(process.execPath, [join(scriptDir, 'check.mjs')], { timeout: 60_000 }).finally(() => rmSync(scriptDir, { recursive: true, force: true }));

    // Assess
    expect(JSON.parse(stdout)).toMatchObject({ type: 'done', check: { valid: 1, invalid: 1, total: 2, problems: [{ line: 2, code: 'INVALID_OPTIONS' }] } });
  });

  test.each(ALL_FUNCTIONS.flatMap((name) => [BUNDLED_MERGE_WORKER_NAME, BUNDLED_FINISHING_WORKER_NAME].map((worker) => [name, worker] as const)))(
    '%s carries the %s bundle exactly when its bundle starts one',
    (name, worker) => {
      const dir = assetDir(functionId(name));
      const startsOne = readFileSync(join(dir, 'index.mjs'), 'utf8').includes(worker);
      expect(existsSync(join(dir, worker))).toBe(startsOne);
    },
  );

  test('the functions that join or print PDFs start PDF workers: the merge worker joins PDFs on its own, the finishing worker leaves qpdf to the layer', async () => {
    // Prepare: two one-page PDFs, joined by the batch function's merge worker into a file it is given
    const carriers = (worker: string) => ALL_FUNCTIONS.filter((name) => existsSync(join(assetDir(functionId(name)), worker)));
    const worker = join(assetDir(functionId('batch')), BUNDLED_MERGE_WORKER_NAME);
    const scriptDir = mkdtempSync(join(tmpdir(), 'pdf-api-worker-check-'));
    const onePage = '%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n';
    const script = `
      import { openSync, closeSync } from 'node:fs';
      import { Worker } from 'node:worker_threads';
      const fd = openSync(${JSON.stringify(join(scriptDir, 'merged.pdf'))}, 'w');
      const worker = new Worker(${JSON.stringify(worker)});
      const file = new TextEncoder().encode(${JSON.stringify(onePage)});
      const steps = [{ type: 'open', fd, maxBytes: 1e6 }, { type: 'append', bytes: file }, { type: 'append', bytes: file }, { type: 'finish' }];
      worker.on('message', (message) => {
        if (message.type === 'refused' || message.type === 'failed' || (message.type === 'done' && steps.length === 0)) {
          closeSync(fd);
          console.log(JSON.stringify(message));
          process.exit(0);
        }
        worker.postMessage(steps.shift());
      });`;

    // Act
    writeFileSync(join(scriptDir, 'check.mjs'), script);
    const { stdout } = await run(process.execPath, [join(scriptDir, 'check.mjs')], { timeout: 60_000 }).finally(() => rmSync(scriptDir, { recursive: true, force: true }));

    // Assess
    expect(JSON.parse(stdout)).toMatchObject({ type: 'done', value: { pages: 2 } });
    expect(carriers(BUNDLED_MERGE_WORKER_NAME)).toEqual(expect.arrayContaining(['batch']));
    expect(carriers(BUNDLED_FINISHING_WORKER_NAME)).toEqual(expect.arrayContaining(['generate', 'render', 'preview']));
    for (const name of carriers(BUNDLED_FINISHING_WORKER_NAME)) {
      expect(readFileSync(join(assetDir(functionId(name)), BUNDLED_FINISHING_WORKER_NAME), 'utf8')).toMatch(/from\s*"@neslinesli93\/qpdf-wasm"/);
    }
  });

  test.each(ALL_FUNCTIONS)('%s keeps @sparticuz/chromium outside exactly when it runs Chromium', (name) => {
    const bundle = readFileSync(join(assetDir(functionId(name)), 'index.mjs'), 'utf8');
    if (FUNCTION_PROFILES[name].chromium) expect(bundle).toMatch(/from\s*"@sparticuz\/chromium"/);
    else expect(bundle).not.toContain('sparticuz');
  });

  test.each(ALL_FUNCTIONS)('%s carries the Secrets Manager client exactly when it reads a secret', (name) => {
    const bundle = readFileSync(join(assetDir(functionId(name)), 'index.mjs'), 'utf8');
    // The client's own configuration, which only its code carries (the caller names its classes either way).
    const secretsManagerClient = /defaultSigningName:\s*"secretsmanager"/;
    if (FUNCTION_PROFILES[name].linkSecret) expect(bundle).toMatch(secretsManagerClient);
    else {
      expect(bundle).not.toMatch(secretsManagerClient);
      // Left as a plain import that only a `<NAME>_ARN` variable would ever reach.
      expect(bundle).toContain(`import("${SECRETS_MANAGER_CLIENT}")`);
    }
  });

  test.each(ALL_FUNCTIONS)('%s ships the service’s fonts beside its bundle exactly when it runs Chromium', (name) => {
    const dir = assetDir(functionId(name));
    if (FUNCTION_PROFILES[name].chromium) {
      // Where lib/render/fonts.ts looks on Lambda: node_modules under the task root.
      for (const file of bundledFontFiles([dir])) expect(file.startsWith(join(dir, 'node_modules'))).toBe(true);
      for (const path of FONT_BUNDLE_PATHS) expect(existsSync(join(dir, 'node_modules', path)), path).toBe(true);
      // And pdf.js's two scripts, which draw PDF thumbnails (lib/render/thumbnail.ts), where it looks for them.
      for (const path of PDFJS_BUNDLE_PATHS) expect(locateBundledFile(path, [dir]), path).toBe(join(dir, 'node_modules', path));
    } else {
      expect(existsSync(join(dir, 'node_modules'))).toBe(false);
    }
  });

  test.each(ALL_FUNCTIONS)('%s fits Lambda\'s 250 MB unzipped, its fonts and layers included', (name) => {
    // Act: the function's bundle (with the fonts beside it) and every layer it is given
    const id = functionId(name);
    const layers = (template.Resources[id]!.Properties!.Layers ?? []).map((layer) => layer.Ref);
    const bundle = treeBytes(assetDir(id));
    const total = layers.reduce((sum, layer) => sum + treeBytes(assetDir(layer)), bundle);

    // Assess
    console.info(`${name}: bundle ${(bundle / 1e6).toFixed(1)} MB + layers ${((total - bundle) / 1e6).toFixed(1)} MB = ${(total / 1e6).toFixed(1)} MB unzipped`);
    expect(total).toBeLessThan(LAMBDA_UNZIPPED_LIMIT_BYTES);
    if (FUNCTION_PROFILES[name].chromium) expect(layers).toHaveLength(1);
  });

  test('the layer holds @sparticuz/chromium with its compressed browser, fonts and libraries', () => {
    const bin = join(layerDir(), 'nodejs', 'node_modules', '@sparticuz', 'chromium', 'bin');
    for (const file of [PACKED_CHROMIUM_FILE, 'fonts.tar.br', 'swiftshader.tar.br', 'al2023.tar.br']) expect(existsSync(join(bin, file)), file).toBe(true);
    expect(existsSync(join(bin, 'chromium.br'))).toBe(false);
  });

  test('the browser repacked with zstd is, unpacked, byte for byte the browser @sparticuz/chromium ships', () => {
    const digest = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
    const shipped = brotliDecompressSync(readFileSync(join(PROJECT_ROOT, 'node_modules', '@sparticuz', 'chromium', 'bin', 'chromium.br')));
    const repacked = zstdDecompressSync(readFileSync(join(layerDir(), 'nodejs', 'node_modules', '@sparticuz', 'chromium', 'bin', PACKED_CHROMIUM_FILE)));
    expect(repacked.length).toBe(shipped.length);
    expect(digest(repacked)).toBe(digest(shipped));
  });

  test('@sparticuz/chromium loads from the layer alone, its dependencies included', async () => {
    // Outside the project, so nothing resolves from the project's own node_modules.
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('@sparticuz/chromium'); console.log(typeof m.default.executablePath)"],
      { cwd: join(layerDir(), 'nodejs') },
    );
    expect(stdout.trim()).toBe('function');
  });

  test('qpdf (encryption) loads from the layer alone and finds its WebAssembly beside it', async () => {
    // Outside the project: the .wasm must come from the layer, as lib/render/encryption.ts resolves it.
    const script =
      "import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/'); " +
      "const create = (await import('@neslinesli93/qpdf-wasm')).default; " +
      "const q = await create({ locateFile: () => require.resolve('@neslinesli93/qpdf-wasm/dist/qpdf.wasm') }); " +
      "console.log(q.callMain(['--version']));";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: join(layerDir(), 'nodejs') });
    expect(stdout).toMatch(/version 12\.\d+\.\d+[\s\S]*\n0\s*$/);
  });

  test('the site function carries its pages’ files and serves them from its own asset, outside the checkout', async () => {
    // Prepare: a copy of the asset alone (no lib/, no node_modules), as Lambda's /var/task.
    const task = mkdtempSync(join(tmpdir(), 'pdf-api-site-'));
    try {
      cpSync(assetDir(functionId('site')), task, { recursive: true });
      for (const name of Object.keys(SITE_ASSETS)) expect(existsSync(join(task, SITE_ASSETS_DIR, name)), name).toBe(true);
      const event = (path: string, resource: string, name?: string) =>
        JSON.stringify({ httpMethod: 'GET', path, resource, headers: { Host: 'x.execute-api.us-east-1.amazonaws.com' }, pathParameters: name ? { name } : null, requestContext: { stage: 'prod', domainName: 'x.execute-api.us-east-1.amazonaws.com' } });
      const script = [
        "const { handler } = await import('./index.mjs');",
        "const context = { awsRequestId: 'r', functionName: 'site', getRemainingTimeInMillis: () => 3000 };",
        `const docs = await handler(${event('/docs', '/docs')}, context);`,
        `const redoc = await handler(${event('/assets/redoc.standalone.js', '/assets/{name}', 'redoc.standalone.js')}, context);`,
        `const document = await handler(${event('/v1/openapi.json', '/v1/openapi.json')}, context);`,
        'console.log(JSON.stringify({ docs: docs.statusCode, base: /<base href="([^"]+)"/.exec(docs.body)?.[1], redoc: [redoc.statusCode, redoc.body.length], servers: JSON.parse(document.body).servers }));',
      ].join('\n');

      // Act
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
        cwd: task,
        env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', POWERTOOLS_LOG_LEVEL: 'CRITICAL', POWERTOOLS_METRICS_DISABLED: 'true' },
      });

      // Assess: the page names the stage's base, and the 1 MB Redoc comes from the asset itself.
      const served = JSON.parse(stdout.trim().split('\n').at(-1) as string);
      expect(served.docs).toBe(200);
      expect(served.base).toBe('https://x.execute-api.us-east-1.amazonaws.com/prod/');
      expect(served.redoc[0]).toBe(200);
      expect(served.redoc[1]).toBeGreaterThan(500_000);
      expect(served.servers).toEqual([{ url: 'https://x.execute-api.us-east-1.amazonaws.com/prod' }]);
    } finally {
      rmSync(task, { recursive: true, force: true });
    }
  });

  // That every bundle loads and answers with the layer found as Lambda finds it (read-only, through
  // NODE_PATH) is the Lambda emulation's to show: test/lambda/lambda.test.ts.
});
