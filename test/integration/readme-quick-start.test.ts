/**
 * A newcomer's path, as the README gives it: its quick-start block run as written, by bash, from a
 * scratch directory of the checkout, against the local stack this project started (the one
 * `npm start` starts, on a free port: the block's `http://127.0.0.1:3000` is that port, and
 * PDFAPI_URL tells the CLI so). What it leaves behind is read as the newcomer would: the PDFs.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { delimiter, dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { apiUrl } from '../support/api.ts';
import { POINTS_PER_INCH, readPdf } from '../support/pdf.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const DOCUMENTED_URL = 'http://127.0.0.1:3000';

/** The fenced block right after the `<!-- quick-start: ... -->` marker. */
function quickStart(): string {
  const lines = README.split('\n');
  const marker = lines.findIndex((line) => line.startsWith('<!-- quick-start:'));
  if (marker < 0 || lines[marker + 1] !== '```sh') throw new Error('README.md: no ```sh block after a <!-- quick-start: --> marker');
  const end = lines.indexOf('```', marker + 2);
  return lines.slice(marker + 2, end).join('\n');
}

let scratch: string | undefined;
afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the README', () => {
  it('starts the service and runs the tests with exactly the two commands CI runs', async () => {
    // Assess: the two commands, in the README and in .ci/run, which runs the README's test command.
    expect(README).toMatch(/^npm ci && npm start +# /m);
    expect(README).toMatch(/^npm ci && npm test +# /m);
    expect(README).toContain('`npm ci && npm start`');
    const ci = await readFile(join(ROOT, '.ci/run'), 'utf8');
    expect(ci).toMatch(/^npm ci\nnpm test$/m);
  });

  it('quick start runs as written: a key, a PDF by curl and its link, the CLI\u2019s generate, batch and usage', { timeout: 240_000 }, async () => {
    // Arrange: a scratch directory inside the checkout (.local is git-ignored), where npm finds the project.
    await mkdir(join(ROOT, '.local'), { recursive: true });
    scratch = await mkdtemp(join(ROOT, '.local', 'quick-start-'));
    const script = quickStart().replaceAll(DOCUMENTED_URL, apiUrl);

    // Act
    const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: scratch,
      env: {
        ...process.env,
        // The pinned Node first, as npm scripts and npx put it.
        PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`,
        DATA_DIR: inject('dataDir'),
        TABLE_NAME: '',
        PDFAPI_URL: apiUrl,
        PDFAPI_KEY: '',
      },
      timeout: 220_000,
      maxBuffer: 16 * 1024 * 1024,
    });

    // Assess: the PDF made with curl and downloaded through its link.
    expect(stderr).not.toMatch(/error/i);
    const answer = JSON.parse(await readFile(join(scratch, 'answer.json'), 'utf8')) as { id: string; pages: number };
    expect(answer.id).toMatch(/^pdf_/);
    const byCurl = await readPdf(await readFile(join(scratch, 'invoice-42.pdf')));
    expect(byCurl.text).toContain('Invoice 42');
    expect(byCurl.text).toContain('Total: 99 EUR');

    // The CLI's generate: Letter paper, the footer's page numbers.
    const byCli = await readPdf(await readFile(join(scratch, 'invoice-43.pdf')));
    expect(byCli.pages[0]).toMatchObject({ width: 8.5 * POINTS_PER_INCH, height: 11 * POINTS_PER_INCH });
    expect(byCli.text).toContain('Invoice 43');
    expect(byCli.text).toContain('Page 1 of 1');

    // The batch: one PDF per file, each its own.
    expect((await readdir(join(scratch, 'out'))).sort()).toEqual(['invoice-1.pdf', 'invoice-2.pdf', 'invoice-3.pdf']);
    for (const n of [1, 2, 3]) expect((await readPdf(await readFile(join(scratch, 'out', `invoice-${n}.pdf`)))).text).toContain(`Invoice ${n}`);

    // usage: the key's tier, and the five PDFs of the quick start charged.
    expect(stdout).toMatch(/^tier +pro$/m);
    expect(stdout).toMatch(/^PDFs this month +5 of /m);

    // Run from the checkout's root, as the README says, it leaves nothing git would show as untracked.
    const left = (await readdir(scratch, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => relative(scratch!, join(entry.parentPath, entry.name)));
    expect(left.length).toBeGreaterThan(5);
    const notIgnored = await Promise.all(
      left.map(async (path) => {
        // check-ignore exits 1 for a path no rule ignores.
        const ignored = await run('git', ['check-ignore', '--no-index', '--quiet', path], { cwd: ROOT }).then(() => true, () => false);
        return ignored ? undefined : path;
      }),
    );
    expect(notIgnored.filter(Boolean), 'files the quick start leaves untracked in the checkout').toEqual([]);
  });

  it('points at a playground and an API reference that answer', async () => {
    for (const path of ['/', '/docs']) {
      expect(README).toContain(`${DOCUMENTED_URL}${path}`);
      const response = await fetch(apiUrl + path);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    }
  });
});
