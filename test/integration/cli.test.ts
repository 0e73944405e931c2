/**
 * The pdfapi CLI as a developer runs it after `npm ci`: the bin npm linked (node_modules/.bin/pdfapi),
 * PDFAPI_URL pointing at the local stack and PDFAPI_KEY from the key tool. What it prints, what it
 * exits with and the PDFs it writes are checked, the PDFs by reading them.
 */
import { mkdir, mkdtemp, readdir, readFile, symlink, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { apiUrl, createKey, download, quotaUsed, type TestKey } from '../support/api.ts';
import { expectNoStackTrace, pdfapi } from '../support/cli.ts';
import { POINTS_PER_INCH, readPdf, readPdfFacts } from '../support/pdf.ts';

let workDir: string;
let key: TestKey;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'pdfapi-cli-'));
  key = await createKey('pro');
});

describe('pdfapi generate', () => {
  it('prints an HTML file with the options given as flags and downloads it with -o', async () => {
    // Arrange
    const invoice = join(workDir, 'invoice.html');
    const footer = join(workDir, 'footer.html');
    const output = join(workDir, 'invoice.pdf');
    await writeFile(invoice, '<!doctype html><h1>Invoice 2026-001</h1><p>Total: 120.00 EUR</p>');
    await writeFile(footer, '<div style="font-size:10px;width:100%;text-align:center">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>');
    const usedBefore = await quotaUsed(key);

    // Act
    const run = await pdfapi(['generate', invoice, '-o', output, '--format', 'letter', '--orientation', 'landscape', '--footer-html', `@${footer}`, '--margin', '{"bottom":"25mm"}'], { key });

    // Assess
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^id\s+pdf_\w{20,}$/m);
    expect(run.stdout).toContain(`saved ${output}`);
    const pdf = await readPdf(await readFile(output));
    expect(pdf.pageCount).toBe(1);
    expect(pdf.pages[0]).toMatchObject({ width: 11 * POINTS_PER_INCH, height: 8.5 * POINTS_PER_INCH });
    expect(pdf.text).toContain('Invoice 2026-001');
    expect(pdf.text).toContain('Page 1 of 1');
    expect(await quotaUsed(key)).toBe(usedBefore + 1);
  });

  it('reads standard input and, with -o -, writes the PDF alone to standard output', async () => {
    // Act
    const run = await pdfapi(['generate', '-o', '-', '--outline'], { key, input: '<h1>Piped chapter</h1><p>From stdin</p>' });

    // Assess
    expect(run.code).toBe(0);
    expect(run.stdoutBytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(run.stderr).toMatch(/^pdf_\w+: 1 page, [\d.]+ KB\n$/);
    const facts = await readPdfFacts(new Uint8Array(run.stdoutBytes));
    expect(facts.pageTexts.join(' ')).toContain('From stdin');
    expect(facts.outline).toEqual(['Piped chapter']);
  });

  it('prints a public URL with --url and answers the record as JSON with --json', async () => {
    // Act
    const run = await pdfapi(['generate', '--url', `${inject('publicSite')}/page`, '--json', '--no-tagged'], { key });

    // Assess
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout) as { id: string; url: string; pages: number };
    expect(record.pages).toBe(1);
    const bytes = new Uint8Array(await (await fetch(record.url)).arrayBuffer());
    expect((await readPdf(bytes)).text).toContain('Fixture page from the public site');
  });

  it('with --idempotency-key, runs again safely: the same PDF, charged once', async () => {
    // Arrange
    const usedBefore = await quotaUsed(key);
    const args = ['generate', '--json', '--idempotency-key', `cli-retry-${Date.now()}`];

    // Act
    const first = await pdfapi(args, { key, input: '<h1>Retried invoice</h1>' });
    const again = await pdfapi(args, { key, input: '<h1>Retried invoice</h1>' });

    // Assess
    expect(first.code).toBe(0);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).id).toBe(JSON.parse(first.stdout).id);
    expect(await quotaUsed(key)).toBe(usedBefore + 1);
  });

  it('with --async, submits a job and prints its id; job --wait -o fetches the PDF; --async --wait acts as without --async', async () => {
    // Arrange
    const usedBefore = await quotaUsed(key);
    const output = join(workDir, 'async.pdf');

    // Act: submit, then wait for it with job
    const submitted = await pdfapi(['generate', '--async', '--json', '--format', 'A5'], { key, input: '<h1>Queued report</h1>' });
    const jobId = JSON.parse(submitted.stdout).job_id as string;
    const waited = await pdfapi(['job', jobId, '--wait', '-o', output], { key });
    const inOne = await pdfapi(['generate', '--async', '--wait', '--json'], { key, input: '<h1>Waited for</h1>' });

    // Assess
    expect(submitted.code).toBe(0);
    expect(jobId).toMatch(/^job_\w{20,}$/);
    expect(waited.code).toBe(0);
    expect(waited.stdout).toContain(`${jobId}: succeeded`);
    const pdf = await readPdf(await readFile(output));
    expect(pdf.text).toContain('Queued report');
    expect(Math.round(pdf.pages[0]!.width)).toBe(420);
    expect(inOne.code).toBe(0);
    expect(JSON.parse(inOne.stdout)).toMatchObject({ id: expect.stringMatching(/^pdf_/), pages: 1 });
    expect(await quotaUsed(key)).toBe(usedBefore + 2);
  });

  it('a failed job prints the API’s error and exits 1; --wait without --async is a usage error', async () => {
    const failed = await pdfapi(['generate', '--async', '--wait', '--url', `${inject('publicSite')}/not-found`], { key });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^error url_fetch_failed: .*404/m);
    expectNoStackTrace(failed);
    const misuse = await pdfapi(['generate', '--wait'], { key, input: '<p>x</p>' });
    expect(misuse.code).toBe(2);
    expect(misuse.stderr).toContain('--webhook-url and --wait go with --async');
  });

  it('prints the API’s error code and message for a refused option, exits 1 and charges nothing', async () => {
    // Arrange
    const usedBefore = await quotaUsed(key);

    // Act
    const run = await pdfapi(['generate', '--scale', '3'], { key, input: '<p>too big</p>' });

    // Assess
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error invalid_request: .*scale.*\n$/);
    expect(run.stdout).toBe('');
    expectNoStackTrace(run);
    expect(await quotaUsed(key)).toBe(usedBefore);
  });

  it.each([
    ['an unknown key', ['generate'], { PDFAPI_KEY: 'pdfk_0000000000000000000000000000000000' }, 1, /^error unauthorized: /],
    ['no key', ['generate'], { PDFAPI_KEY: '' }, 2, /^error: no API key: set PDFAPI_KEY/],
    ['an unknown flag', ['generate', '--colour', 'red'], {}, 2, /^error: unknown option '--colour'/],
    ['a JSON option that is not JSON', ['generate', '--watermark', '{DRAFT'], {}, 2, /^error: option '--watermark <json\|file>' argument '\{DRAFT' is invalid\. --watermark: the inline value is not JSON \(.+\); give inline JSON, a file, or @file\n/],
    ['a JSON option naming no file', ['generate', '--watermark', 'watermark.json'], {}, 2, /--watermark: cannot read watermark\.json \(no such file\); give inline JSON, a file, or @file\n/],
    ['a missing file', ['generate', '/nonexistent/invoice.html'], {}, 1, /^error: \/nonexistent\/invoice\.html: no such file or directory\n$/],
    ['a service that is not there', ['generate'], { PDFAPI_URL: 'http://127.0.0.1:9' }, 1, /^error: cannot reach http:\/\/127\.0\.0\.1:9: /],
    ['a file and --url', ['generate', 'a.html', '--url', 'https://example.com'], {}, 2, /^error: give an HTML or Markdown file or --url, not both\n$/],
  ])('%s: a one-line error on stderr and a non-zero exit', async (_case, args, env, code, message) => {
    // Act
    const run = await pdfapi(args, { key, input: '<p>x</p>', env });

    // Assess
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(message);
    expectNoStackTrace(run);
  });

  it('has a flag for every document option of the live OpenAPI document', async () => {
    // Arrange
    const document = (await (await fetch(`${apiUrl}/v1/openapi.json`)).json()) as { components: { schemas: { DocumentOptions: { properties: Record<string, { type?: string }> } } } };

    // Act
    const help = (await pdfapi(['generate', '--help'])).stdout;

    // Assess
    const options = Object.entries(document.components.schemas.DocumentOptions.properties);
    expect(options.length).toBeGreaterThan(20);
    for (const [name] of options) expect(help).toMatch(new RegExp(`--(no-)?${name.replaceAll('_', '-')}\\b`));
  });
});

describe('pdfapi batch', () => {
  it('prints every .html file of a directory in batches the key allows, with a progress bar, a summary and exit 1 for a failed item', async () => {
    // Arrange: 11 documents and one broken one, for a free key that sends at most 10 per batch.
    const freeKey = await createKey('free');
    const source = join(workDir, 'batch-in');
    const output = join(workDir, 'batch-out');
    await mkdir(source);
    for (let n = 1; n <= 11; n++) await writeFile(join(source, `doc-${n}.html`), `<h1>Document number ${n}</h1>`);
    await writeFile(join(source, 'broken.html'), '<div');
    await writeFile(join(source, 'notes.txt'), 'not HTML, not sent');

    // Act
    const run = await pdfapi(['batch', source, '-o', output, '--progress', '--format', 'A5'], { key: freeKey });

    // Assess
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/12\/12 PDFs/);
    expect(run.stdout).toMatch(/^broken\.html\s+INVALID_HTML\s+html is malformed/m);
    expect(run.stdout).toMatch(/^doc-11\.html\s+ok\s+1\s/m);
    expect(run.stdout).toContain(`11 of 12 saved to ${output}; 1 failed`);
    const files = (await readdir(output)).sort();
    expect(files).toEqual(Array.from({ length: 11 }, (_, i) => `doc-${i + 1}.pdf`).sort());
    for (const n of [1, 11]) {
      const pdf = await readPdf(await readFile(join(output, `doc-${n}.pdf`)));
      expect(pdf.text).toBe(`Document number ${n}`);
      expect(pdf.pages[0]!.width).toBeCloseTo(148 * (72 / 25.4), 0);
    }
    expect(await quotaUsed(freeKey)).toBe(11);
  });

  it('keeps every request under the API’s 5 MB body limit: large files go in several requests, one too large alone fails alone', async () => {
    // Arrange: three files of 2 MB (6 MB together) and one of 6 MB
    const source = join(workDir, 'large-in');
    const output = join(workDir, 'large-out');
    await mkdir(source);
    const padded = (title: string, megabytes: number) => `<!doctype html><!--${'x'.repeat(megabytes * 1024 * 1024)}--><h1>${title}</h1>`;
    for (const name of ['a', 'b', 'c']) await writeFile(join(source, `${name}.html`), padded(`Large ${name}`, 2));
    await writeFile(join(source, 'huge.html'), padded('Huge', 6));

    // Act
    const run = await pdfapi(['batch', source, '-o', output], { key });

    // Assess
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^huge\.html\s+payload_too_large\s/m);
    expect(run.stdout).toContain(`3 of 4 saved to ${output}; 1 failed`);
    expect((await readdir(output)).sort()).toEqual(['a.pdf', 'b.pdf', 'c.pdf']);
    expect((await readPdf(await readFile(join(output, 'c.pdf')))).text).toBe('Large c');
  });

  it('with --merge also saves the files joined in order', async () => {
    // Arrange
    const source = join(workDir, 'merge-in');
    const output = join(workDir, 'merge-out');
    await mkdir(source);
    await writeFile(join(source, 'a.html'), '<h1>First part</h1>');
    await writeFile(join(source, 'b.html'), '<h1>Second part</h1><div style="break-before:page">Second part, page two</div>');

    // Act
    const run = await pdfapi(['batch', source, '-o', output, '--merge', '--json'], { key });

    // Assess
    expect(run.code).toBe(0);
    // The API's shape and words: success, total, successful, failed, each result's success.
    const printed = JSON.parse(run.stdout) as { success: boolean; total: number; successful: number; failed: number; results: { file: string; success: boolean; pages: number }[] };
    expect(printed).toMatchObject({ success: true, total: 2, successful: 2, failed: 0 });
    expect(printed.results.map(({ file, success, pages }) => [file, success, pages])).toEqual([['a.html', true, 1], ['b.html', true, 2]]);
    const merged = await readPdf(await readFile(join(output, 'merged.pdf')));
    expect(merged.pageCount).toBe(3);
    expect(merged.pages.map((page) => page.text)).toEqual(['First part', 'Second part', 'Second part, page two']);
  });
});

describe('pdfapi’s own options', () => {
  it('--api-key and --base-url work before and after the command; pdfapi --version prints the version', async () => {
    // Act
    const after = await pdfapi(['usage', '--json', '--api-key', key.apiKey], { env: { PDFAPI_KEY: '' } });
    const before = await pdfapi(['--api-key', key.apiKey, 'usage', '--json'], { env: { PDFAPI_KEY: '' } });
    const overridden = await pdfapi(['usage', '--api-key', key.apiKey], { env: { PDFAPI_KEY: 'pdfk_0000000000000000000000000000000000' } });
    const elsewhere = await pdfapi(['usage', '--base-url', 'http://127.0.0.1:9'], { key });
    const version = await pdfapi(['--version']);

    // Assess
    expect(JSON.parse(after.stdout)).toMatchObject({ tier: 'pro' });
    expect(JSON.parse(before.stdout)).toMatchObject({ tier: 'pro' });
    expect(overridden.code).toBe(0);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/^error: cannot reach http:\/\/127\.0\.0\.1:9: /);
    expect(version).toMatchObject({ code: 0, stdout: `${JSON.parse(await readFile('packages/cli/package.json', 'utf8')).version}\n` });
  });
});

describe('pdfapi usage, list, get, download and delete', () => {
  it('walk a PDF from creation to deletion', async () => {
    // Arrange
    const owner = await createKey('starter');
    const made = await pdfapi(['generate', '--json', '--filename', 'report'], { key: owner, input: '<h1>Quarterly report</h1>' });
    const { id } = JSON.parse(made.stdout) as { id: string };

    // Act + Assess: usage
    const usage = await pdfapi(['usage'], { key: owner });
    expect(usage.code).toBe(0);
    expect(usage.stdout).toMatch(/^tier\s+starter$/m);
    expect(usage.stdout).toMatch(/^PDFs this month\s+1 of /m);

    // list
    const list = await pdfapi(['list', '--limit', '5'], { key: owner });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${id}\\s.*\\sreport\\.pdf$`, 'm'));

    // get
    const get = await pdfapi(['get', id, '--json'], { key: owner });
    expect(JSON.parse(get.stdout)).toMatchObject({ id, filename: 'report.pdf', pages: 1 });

    // download
    const saved = join(workDir, 'downloaded.pdf');
    const download = await pdfapi(['download', id, '-o', saved], { key: owner });
    expect(download.code).toBe(0);
    expect((await readPdf(await readFile(saved))).text).toBe('Quarterly report');

    // another key sees nothing of it
    const stranger = await pdfapi(['get', id], { key });
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toMatch(/^error not_found: /);

    // delete
    const deleted = await pdfapi(['delete', id], { key: owner });
    expect(deleted).toMatchObject({ code: 0, stdout: `deleted ${id}\n` });
    const gone = await pdfapi(['get', id], { key: owner });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^error not_found: /);
    expect((await pdfapi(['list'], { key: owner })).stdout).toBe('no PDFs\n');
  });
});

/** What a terminal would act on: escape sequences, other C0 and C1 controls, bidi and invisible formatting. */
const TERMINAL_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u;

describe('pdfapi with foreign encodings, hostile servers and careless use (issue #29 item 6)', () => {
  it('decodes each file by its BOM or declared charset; an undeclared file that is not UTF-8 fails alone, named', async () => {
    // Arrange
    const source = join(workDir, 'charset-in');
    const output = join(workDir, 'charset-out');
    await mkdir(source);
    await writeFile(join(source, 'latin.html'), Buffer.from('<!doctype html><meta charset="windows-1252"><h1>Caf\xe9 \x80 5</h1>', 'latin1'));
    await writeFile(join(source, 'equiv.html'), Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><h1>Gr\xfc\xdfe</h1>', 'latin1'));
    await writeFile(join(source, 'utf16.html'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<h1>Ünïcode sixteen</h1>', 'utf16le')]));
    await writeFile(join(source, 'plain.html'), '<h1>Naïve déjà vu</h1>');
    await writeFile(join(source, 'undeclared.html'), Buffer.from('<h1>Caf\xe9 without a charset</h1>', 'latin1'));

    // Act
    const run = await pdfapi(['batch', source, '-o', output], { key });
    const single = await pdfapi(['generate', join(source, 'latin.html'), '--json'], { key });
    const piped = await pdfapi(['generate', '--json'], { key, input: await readFile(join(source, 'utf16.html')) });

    // Assess
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^undeclared\.html\s+encoding_error\s+.*not (valid )?UTF-8.*<meta charset/m);
    expect(run.stdout).toContain(`4 of 5 saved to ${output}; 1 failed`);
    const text = async (name: string) => (await readPdf(await readFile(join(output, name)))).text;
    expect(await text('latin.pdf')).toBe('Café € 5');
    expect(await text('equiv.pdf')).toBe('Grüße');
    expect(await text('utf16.pdf')).toBe('Ünïcode sixteen');
    expect(await text('plain.pdf')).toBe('Naïve déjà vu');
    for (const made of [single, piped]) expect(made.code).toBe(0);
    expect((await readPdf(await download(JSON.parse(single.stdout).url))).text).toBe('Café € 5');
    expect((await readPdf(await download(JSON.parse(piped.stdout).url))).text).toBe('Ünïcode sixteen');
  });

  describe('against a server that sends hostile names and text', () => {
    const names: Record<string, string> = {
      pdf_dotfile: '.bashrc',
      pdf_dash: '-',
      pdf_escapes: 'a\u001b[31mred\nline\u0007.pdf',
      pdf_bidi: 'invoice\u202egpj.exe',
      pdf_slashes: '..／..／x.pdf',
      pdf_reserved: 'CON.pdf',
      pdf_long: `${'報'.repeat(100)}.pdf`,
      pdf_empty: '..',
    };
    let server: ReturnType<typeof createServer>;
    let base: string;
    beforeAll(async () => {
      server = createServer((request, response) => {
        const json = (status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        const [, , , id] = /^\/(v1\/pdf|file)\/(([\w]+))$/.exec(request.url ?? '') ?? [];
        if (request.url?.startsWith('/file/')) return response.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-1.4 stand-in\n');
        if (id && names[id] !== undefined) {
          return json(200, { id, url: `${base}/file/${id}`, size: 18, pages: 1, format: 'A4\u001b[2J', filename: names[id], generation_time_ms: 1, created_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-02-01T00:00:00.000Z' });
        }
        json(404, { error: { code: 'not_found\u001b[5m', message: 'gone \u001b]0;pwned\u0007\u001b[2Jfor good\u009b31m\r\nerror: forged line' } });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('download saves under a safe name of its own making, never a dotfile, stdout, a path or an unsafe name', async () => {
      // Arrange
      const into = await mkdtemp(join(workDir, 'names-'));

      // Act
      const runs = await Promise.all(Object.keys(names).map(async (id) => [id, await pdfapi(['download', id], { key, cwd: into, env: { PDFAPI_URL: base } })] as const));

      // Assess
      for (const [id, run] of runs) {
        expect(run.code, id).toBe(0);
        expect(run.stdoutBytes.includes('%PDF'), id).toBe(false);
        expect(run.stdout, id).not.toMatch(TERMINAL_CONTROL);
      }
      const saved = (await readdir(into)).sort();
      expect(saved).toEqual(['_CON.pdf', 'a_[31mred_line_.pdf', 'bashrc.pdf', 'invoice_gpj.exe.pdf', `${'報'.repeat(65)}.pdf`, 'pdf_dash.pdf', 'pdf_empty.pdf', '_.._x.pdf'].sort());
      for (const name of saved) {
        expect(Buffer.byteLength(name)).toBeLessThanOrEqual(200);
        expect(name).toMatch(/^[^.\-\s].*\.pdf$/);
        expect(await readFile(join(into, name), 'latin1')).toBe('%PDF-1.4 stand-in\n');
      }
      expect(runs.find(([id]) => id === 'pdf_dotfile')![1].stdout).toMatch(/saved bashrc\.pdf \(the server named it "\.bashrc"/);
    });

    it('prints no escape sequence, control or bidi character the server sends, on stdout, stderr or in JSON', async () => {
      // Act
      const record = await pdfapi(['get', 'pdf_escapes'], { key, env: { PDFAPI_URL: base } });
      const asJson = await pdfapi(['get', 'pdf_bidi', '--json'], { key, env: { PDFAPI_URL: base } });
      const failure = await pdfapi(['get', 'pdf_unknown'], { key, env: { PDFAPI_URL: base } });

      // Assess
      expect(record.code).toBe(0);
      expect(record.stdout).not.toMatch(TERMINAL_CONTROL);
      expect(record.stdout).toMatch(/^filename\s+a.*red.*line.*\.pdf$/m);
      expect(record.stdout).toMatch(/^format\s+A4$/m);
      expect(asJson.stdout).not.toMatch(TERMINAL_CONTROL);
      expect(JSON.parse(asJson.stdout).filename).toBe('invoice\u202egpj.exe');
      expect(failure.code).toBe(1);
      expect(failure.stderr).not.toMatch(TERMINAL_CONTROL);
      expect(failure.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^error not_found: gone .*for good.* error: forged line$/)]);
    });
  });

  it('refuses, before sending anything, two files that would be saved under one name (exit 2)', async () => {
    // Arrange
    const usedBefore = await quotaUsed(key);
    const twins = join(workDir, 'twins-in');
    const merging = join(workDir, 'merging-in');
    await mkdir(twins);
    await mkdir(merging);
    await writeFile(join(twins, 'report.html'), '<h1>One</h1>');
    await writeFile(join(twins, 'report.htm'), '<h1>Two</h1>');
    await writeFile(join(twins, 'other.html'), '<h1>Other</h1>');
    await writeFile(join(merging, 'a.html'), '<h1>A</h1>');
    await writeFile(join(merging, 'merged.html'), '<h1>Merged</h1>');

    // Act
    const twinRun = await pdfapi(['batch', twins, '-o', join(workDir, 'twins-out')], { key });
    const mergeRun = await pdfapi(['batch', merging, '-o', join(workDir, 'merging-out'), '--merge'], { key });
    const withoutMerge = await pdfapi(['batch', merging, '-o', join(workDir, 'merging-out')], { key });

    // Assess
    expect(twinRun.code).toBe(2);
    expect(twinRun.stderr).toMatch(/^error: .*report\.htm, report\.html would both be saved as report\.pdf/m);
    expect(mergeRun.code).toBe(2);
    expect(mergeRun.stderr).toMatch(/^error: .*merged\.html.*merged\.pdf.*--merge/m);
    expect(await quotaUsed(key)).toBe(usedBefore + 2);
    expect(withoutMerge.code).toBe(0);
    expect(await readdir(join(workDir, 'twins-out')).catch(() => [])).toEqual([]);
  });

  it('reports the symbolic links and other entries it does not print', async () => {
    // Arrange
    const source = join(workDir, 'links-in');
    await mkdir(source);
    await writeFile(join(workDir, 'outside.html'), '<h1>Outside the directory</h1>');
    await writeFile(join(source, 'real.html'), '<h1>Real</h1>');
    await symlink(join(workDir, 'outside.html'), join(source, 'link.html'));
    await mkdir(join(source, 'folder.html'));

    // Act
    const run = await pdfapi(['batch', source, '-o', join(workDir, 'links-out')], { key });
    const asJson = await pdfapi(['batch', source, '-o', join(workDir, 'links-out'), '--json'], { key });

    // Assess
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^skipped link\.html: a symbolic link/m);
    expect(run.stderr).toMatch(/^skipped folder\.html: a directory/m);
    expect(run.stdout).toContain('1 of 1 saved');
    expect(run.stdout).toContain('2 skipped');
    expect(await readdir(join(workDir, 'links-out'))).toEqual(['real.pdf']);
    expect(JSON.parse(asJson.stdout).skipped).toEqual([
      { file: 'folder.html', reason: expect.stringMatching(/directory/) },
      { file: 'link.html', reason: expect.stringMatching(/symbolic link/) },
    ]);
  });

  it('a huge NUL-filled file fails alone, named, without being read; the rest are printed', async () => {
    // Arrange: 100 MB of NULs (a sparse file), which as JSON is over V8's longest string
    const source = join(workDir, 'nul-in');
    const output = join(workDir, 'nul-out');
    await mkdir(source);
    await writeFile(join(source, 'a.html'), '<h1>Fine</h1>');
    await writeFile(join(source, 'nul.html'), '');
    await truncate(join(source, 'nul.html'), 100 * 1024 * 1024);
    await writeFile(join(source, 'z.html'), '<h1>Also fine</h1>');

    // Act
    const run = await pdfapi(['batch', source, '-o', output], { key });

    // Assess
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^nul\.html\s+payload_too_large\s+100\.0 MB/m);
    expect(run.stdout).toContain(`2 of 3 saved to ${output}; 1 failed`);
    expect((await readdir(output)).sort()).toEqual(['a.pdf', 'z.pdf']);
    expectNoStackTrace(run);
  });

  it('generate -o checks the output path before sending; a write that fails after prints the PDF id and its link', async () => {
    // Arrange
    const usedBefore = await quotaUsed(key);

    // Act
    const missing = await pdfapi(['generate', '-o', join(workDir, 'no-such-dir', 'out.pdf')], { key, input: '<h1>Nowhere</h1>' });
    const directory = await pdfapi(['generate', '-o', workDir], { key, input: '<h1>Nowhere</h1>' });
    const usedAfterRefusals = await quotaUsed(key);
    const full = await pdfapi(['generate', '-o', '/dev/full'], { key, input: '<h1>Made, not saved</h1>' });

    // Assess
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: cannot write .*no-such-dir.*: .*no-such-dir does not exist/m);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toMatch(/is a directory/);
    expect(usedAfterRefusals).toBe(usedBefore);
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/^error: cannot save \/dev\/full: ENOSPC/m);
    const id = /\b(pdf_\w{20,})\b/.exec(full.stderr)?.[1];
    expect(id).toBeDefined();
    const link = /(http:\/\/\S+\/v1\/files\/\S+)/.exec(full.stderr)?.[1];
    expect((await readPdf(await download(link!))).text).toBe('Made, not saved');
    expect(full.stderr).toContain(`pdfapi download ${id}`);
    expectNoStackTrace(full);
  });
});
