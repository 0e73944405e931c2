/**
 * The client and the CLI as a customer gets them (issue #41): both packages built and packed as
 * `npm pack` makes them, installed from the two tarballs alone into a fresh project in a temporary
 * directory outside the checkout (its own package.json, nothing else installed), then
 * - the docs' Node examples (docs/api.md, "Examples in curl, Node and Python") and the client
 *   README's, type-checked with `tsc --strict` against the installed declarations and run against
 *   the local stack on the pinned Node and on the machine's own Node;
 * - the same examples in curl and Python (standard library only) run against the local stack;
 * - the installed `pdfapi` binary run on each Node.
 * PDFs are checked by reading them.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { packAndInstall, type Packed } from '../../packages/build.ts';
import { verifyWebhook } from '../../packages/client/src/index.ts';
import { apiUrl, runKeyTool } from '../support/api.ts';
import { normalizeText, readPdf } from '../support/pdf.ts';

const ROOT = process.cwd();
const webhookPort = inject('examplesWebhookPort');

interface Example {
  readonly name: string;
  readonly language: 'sh' | 'ts' | 'python';
  readonly code: string;
}

/** The fenced blocks of a Markdown file tagged `example=<name>`. */
async function examplesIn(file: string): Promise<Example[]> {
  const text = await readFile(join(ROOT, file), 'utf8');
  return [...text.matchAll(/^```(sh|ts|python) example=([\w-]+)\n([\s\S]*?)^```$/gm)].map(([, language, name, code]) => ({ name: name!, language: language as Example['language'], code: code! }));
}

/** Every Node on PATH other than the pinned one (the machine's own), and the pinned one first. */
function nodes(): string[] {
  const pinned = realpathSync(process.execPath);
  const found = [process.execPath];
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'node');
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    const real = realpathSync(candidate);
    if (real !== pinned && !found.some((each) => realpathSync(each) === real)) found.push(candidate);
  }
  return found;
}

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runIn(cwd: string, command: string, args: readonly string[], env: Record<string, string> = {}, input = ''): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const pdfText = async (file: string) => normalizeText((await readPdf(await readFile(file))).text);

let project: string;
let packed: Record<'client' | 'cli', Packed>;
let env: Record<string, string>;
let apiExamples: Example[];
let nodeExamples: Example[];
let typeCheck: Ran;

beforeAll(async () => {
  ({ project, packed } = await packAndInstall(await mkdtemp(join(tmpdir(), 'pdfapi-customer-'))));

  const created = await runKeyTool(['create', '--tier', 'pro', '--json']);
  const key = JSON.parse(created.stdout) as { api_key: string; webhook_secret: string };
  env = { PDFAPI_URL: apiUrl, PDFAPI_KEY: key.api_key, PDFAPI_WEBHOOK_SECRET: key.webhook_secret, PORT: String(webhookPort), WEBHOOK_URL: `http://127.0.0.1:${webhookPort}/hook` };
  apiExamples = await examplesIn('docs/api.md');

  // The docs' Node examples and the client README's, as files of the customer's project, checked
  // with tsc --strict against the installed declarations and compiled to build/*.js for the runs.
  nodeExamples = [...apiExamples, ...(await examplesIn('packages/client/README.md'))].filter((example) => example.language === 'ts');
  await mkdir(join(project, 'examples'), { recursive: true });
  for (const example of nodeExamples) await writeFile(join(project, 'examples', `${example.name}.ts`), example.code);
  await writeFile(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        rootDir: 'examples',
        outDir: 'build',
        // The customer's own @types/node, as any Node project has; nothing else of the checkout's.
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        types: ['node'],
        skipLibCheck: false,
      },
      include: ['examples/*.ts'],
    }),
  );
  // The TypeScript a customer installs today (npm's latest, 7: the devDependency typescript7).
  typeCheck = await runIn(project, process.execPath, [join(ROOT, 'node_modules', 'typescript7', 'bin', 'tsc'), '-p', '.']);
}, 300_000);

describe('the packed packages', () => {
  it.each(['client', 'cli'] as const)('%s: built JavaScript with declarations, a README and a version; no TypeScript source', async (name) => {
    const { files, version } = packed[name]!;
    const paths = files.map((file) => file.path);
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(paths).toContain('README.md');
    expect(paths).toContain('package.json');
    expect(paths.filter((path) => path.endsWith('.ts') && !path.endsWith('.d.ts'))).toEqual([]);
    const manifest = JSON.parse(await readFile(join(project, 'node_modules', '@pdf-api', name, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies ?? {}).toEqual({});
    // Nothing a customer's Node resolves points at TypeScript.
    const entryPoints = JSON.stringify([manifest.exports, manifest.bin]);
    expect(entryPoints.replaceAll('.d.ts', '')).not.toMatch(/\.ts\b/);
    if (name === 'client') expect(paths).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/schema.d.ts', 'dist/openapi.json']));
    else expect(paths).toEqual(expect.arrayContaining(['bin/pdfapi.js', 'dist/pdfapi.js']));
  });

  it('type-checks every client example of the docs with tsc --strict against the installed declarations', () => {
    expect(nodeExamples.map((example) => example.name)).toEqual(expect.arrayContaining(['generate', 'batch', 'template', 'async', 'bulk', 'readme-quick-start', 'readme-webhook']));
    expect(typeCheck.stdout + typeCheck.stderr).toBe('');
    expect(typeCheck.code).toBe(0);
  });
});

/** A webhook receiver on the allow-listed port, for the curl example (curl cannot receive one): its first delivery. */
async function webhookReceiver(): Promise<{ delivered: Promise<{ body: string; headers: IncomingHttpHeaders }>; close: () => Promise<void> }> {
  let deliver!: (delivery: { body: string; headers: IncomingHttpHeaders }) => void;
  const delivered = new Promise<{ body: string; headers: IncomingHttpHeaders }>((resolve) => (deliver = resolve));
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    response.writeHead(204).end();
    deliver({ body: Buffer.concat(chunks).toString('utf8'), headers: request.headers });
  });
  await new Promise<void>((resolve) => server.listen(webhookPort, '127.0.0.1', resolve));
  return { delivered, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** What each example leaves for its user to check: the files it saved and what it printed. */
const expected: Record<string, (dir: string, ran: Ran, language: Example['language']) => Promise<void>> = {
  generate: async (dir) => {
    expect(await pdfText(join(dir, 'invoice.pdf'))).toContain('Invoice 2026-001 Total: 120.00 EUR');
  },
  batch: async (dir, ran) => {
    expect(await pdfText(join(dir, 'invoice-1.pdf'))).toContain('Invoice 1');
    expect(await pdfText(join(dir, 'invoice-2.pdf'))).toContain('Invoice 2');
    expect(ran.stdout).toMatch(/2 of 2 made/);
  },
  template: async (dir) => {
    expect(await pdfText(join(dir, 'invoice-2026-002.pdf'))).toContain('Invoice 2026-002 Total: 99.00 EUR');
  },
  async: async (_dir, ran, language) => {
    if (language === 'sh') expect(ran.stdout).toMatch(/^job_\w+ succeeded$/m);
    else expect(ran.stdout).toMatch(/^verified pdf\.job\.completed:? job_\w+ succeeded$/m);
  },
  bulk: async (dir, ran, language) => {
    if (language === 'sh') {
      expect(ran.stdout).toMatch(/^job_\w+ succeeded: 3 PDFs$/m);
      expect((await readFile(join(dir, 'manifest.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(3);
      return;
    }
    for (const n of [1, 2, 3]) expect(await pdfText(join(dir, `order-${n}.pdf`))).toContain(`Order ${n}`);
    expect(ran.stdout).toMatch(/^job_\w+ succeeded/m);
  },
};

describe('the docs examples, run against the local stack', () => {
  const cases = ['generate', 'batch', 'template', 'async', 'bulk'].flatMap((name) => (['sh', 'ts', 'python'] as const).map((language) => [name, language] as const));

  it.each(cases)('%s in %s', { timeout: 180_000 }, async (name, language) => {
    // Arrange
    const example = apiExamples.find((each) => each.name === name && each.language === language);
    expect(example, `docs/api.md has no ${language} example=${name}`).toBeDefined();
    const runs: { dir: string; ran: Ran }[] = [];

    // Act: the Node example on every Node (after the type-check compiled it), the others as written
    const once = async (command: string, args: string[]) => {
      const dir = await mkdtemp(join(tmpdir(), `pdfapi-example-${name}-${language}-`));
      const ran = await runIn(dir, command, args, env);
      runs.push({ dir, ran });
      return ran;
    };
    if (language === 'ts') {
      for (const node of nodes()) await once(node, [join(project, 'build', `${name}.js`)]);
    } else if (language === 'python') {
      await once('python3', ['-c', example!.code]);
    } else if (name === 'async') {
      const receiver = await webhookReceiver();
      try {
        const ran = await once('bash', ['-euo', 'pipefail', '-c', example!.code]);
        // The delivery the curl example caused, verified as the Node example verifies one.
        if (ran.code === 0) {
          const delivery = await receiver.delivered;
          await expect(verifyWebhook(delivery.body, delivery.headers, env.PDFAPI_WEBHOOK_SECRET!)).resolves.toMatchObject({ type: 'pdf.job.completed' });
        }
      } finally {
        await receiver.close();
      }
    } else {
      await once('bash', ['-euo', 'pipefail', '-c', example!.code]);
    }

    // Assess
    expect(runs.length).toBeGreaterThan(0);
    for (const { dir, ran } of runs) {
      expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      expect(ran.stderr).not.toMatch(/Traceback|Error:|curl: \(\d+\)/);
      await expected[name]!(dir, ran, language);
    }
  });
});

describe('the installed pdfapi', () => {
  it.each(nodes())('runs on %s: --version, and generates a PDF', async (node) => {
    // Arrange: that Node first on PATH, as `#!/usr/bin/env node` finds it
    const dir = await mkdtemp(join(tmpdir(), 'pdfapi-installed-'));
    const bin = join(project, 'node_modules', '.bin', 'pdfapi');
    const path = { PATH: `${join(node, '..')}${delimiter}${process.env.PATH}` };

    // Act
    const version = await runIn(dir, bin, ['--version'], path);
    const generated = await runIn(dir, bin, ['generate', '-', '-o', 'out.pdf', '--format', 'A5', '--margin', '{"top":"20mm"}'], { ...env, ...path }, '<h1>From the installed CLI</h1>');

    // Assess
    expect(version).toEqual({ code: 0, stdout: `${packed.cli!.version}\n`, stderr: '' });
    expect(generated.stderr).toBe('');
    expect(generated.code).toBe(0);
    expect(await pdfText(join(dir, 'out.pdf'))).toContain('From the installed CLI');
  });
});
