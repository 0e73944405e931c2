/**
 * `pdfapi template …` as a developer runs it against the local stack: a template kept as files
 * (the worked invoice example, examples/invoice/), created, listed, read back as files, previewed,
 * rendered with data, updated to a new version and deleted. PDFs are checked by reading them.
 */
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, quotaUsed, type TestKey } from '../support/api.ts';
import { expectNoStackTrace, pdfapi } from '../support/cli.ts';
import { normalizeText, readPdf } from '../support/pdf.ts';

const EXAMPLE = join(process.cwd(), 'examples', 'invoice');
const exampleFlags = [
  '--html', join(EXAMPLE, 'template.html'),
  '--footer', join(EXAMPLE, 'footer.html'),
  '--schema', join(EXAMPLE, 'schema.json'),
  '--sample', join(EXAMPLE, 'data.json'),
  '--options', `@${join(EXAMPLE, 'options.json')}`,
];

let workDir: string;
let key: TestKey;
let sample: Record<string, unknown>;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'pdfapi-cli-templates-'));
  key = await createKey('starter');
  sample = JSON.parse(await readFile(join(EXAMPLE, 'data.json'), 'utf8')) as Record<string, unknown>;
});

const pdfText = async (file: string) => normalizeText((await readPdf(await readFile(file))).text);

describe('pdfapi template', () => {
  it('creates the invoice example from its files, lists it, previews it uncharged and renders it with data in two locales', async () => {
    // Arrange
    const english = join(workDir, 'data-en.json');
    await writeFile(english, JSON.stringify({ ...sample, locale: 'en-US' }));
    const usedBefore = await quotaUsed(key);

    // Act: create, list, preview (sample data, de-DE)
    const created = await pdfapi(['template', 'create', '--name', 'Invoice', ...exampleFlags], { key });
    const id = /^created (tpl_\w+) version 1 \(Invoice\)$/m.exec(created.stdout)?.[1];
    const listed = await pdfapi(['template', 'list'], { key });
    const preview = await pdfapi(['template', 'preview', id!, '-o', join(workDir, 'preview.pdf')], { key });
    const usedAfterPreview = await quotaUsed(key);
    // render with en-US data, and the sample data from standard input
    const rendered = await pdfapi(['template', 'render', id!, '--data', english, '-o', join(workDir, 'en.pdf')], { key });
    const piped = await pdfapi(['template', 'render', id!, '--data', '-', '--json', '-o', join(workDir, 'de.pdf')], { key, input: JSON.stringify(sample) });

    // Assess
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(id).toBeDefined();
    expect(listed.stdout).toMatch(new RegExp(`^ID\\s+VERSION\\s+UPDATED\\s+NAME\\n${id}\\s+1\\s+\\S+\\s+Invoice$`, 'm'));
    expect(preview.code).toBe(0);
    expect(preview.stdout).toMatch(new RegExp(`^${id} version 1: 1 page, saved .*preview\\.pdf \\(a preview: not stored, not charged\\)$`, 'm'));
    const previewed = await pdfText(join(workDir, 'preview.pdf'));
    expect(previewed).toContain('Rechnungsnummer 2026-0042');
    expect(previewed).toContain('1.237,60 €');
    expect(previewed).toContain('1 / 1');
    expect(usedAfterPreview).toBe(usedBefore);

    expect(rendered.code).toBe(0);
    expect(rendered.stdout).toMatch(/^id\s+pdf_\w+$/m);
    expect(rendered.stdout).toContain(`saved ${join(workDir, 'en.pdf')}`);
    const en = await pdfText(join(workDir, 'en.pdf'));
    expect(en).toContain('Invoice number 2026-0042');
    expect(en).toContain('€1,237.60');
    expect(en).toContain('March 16, 2026');
    expect(piped.code).toBe(0);
    expect(JSON.parse(piped.stdout)).toMatchObject({ template_id: id, template_version: 1, pages: 1 });
    const de = await pdfText(join(workDir, 'de.pdf'));
    expect(de).toContain('1.040,00 €');
    expect(de).toContain('16. März 2026');
    expect(await quotaUsed(key)).toBe(usedBefore + 2);
  });

  it('get -o writes a version back as files that update takes; update keeps the fields not given; render --version picks a version', async () => {
    // Arrange
    const created = await pdfapi(['template', 'create', '--name', 'Round trip', ...exampleFlags, '--json'], { key });
    const id = JSON.parse(created.stdout).template_id as string;
    const copy = join(workDir, 'round-trip');

    // Act: read version 1 back as files; change the html alone and save it as version 2.
    const got = await pdfapi(['template', 'get', id, '-o', copy], { key });
    const edited = (await readFile(join(copy, 'template.html'), 'utf8')).replace('assign t_invoice = "Rechnung"', 'assign t_invoice = "Rechnung (Kopie)"');
    await writeFile(join(copy, 'template.html'), edited);
    const updated = await pdfapi(['template', 'update', id, '--html', join(copy, 'template.html'), '--format', 'A5'], { key });
    const latest = await pdfapi(['template', 'get', id, '--json'], { key });
    const first = await pdfapi(['template', 'get', id, '--version', '1'], { key });
    const data = join(EXAMPLE, 'data.json');
    const v2 = await pdfapi(['template', 'render', id, '--data', data, '-o', join(workDir, 'v2.pdf')], { key });
    const v1 = await pdfapi(['template', 'render', id, '--data', data, '--version', '1', '-o', join(workDir, 'v1.pdf')], { key });

    // Assess
    expect(got.code).toBe(0);
    expect(got.stdout).toBe(`wrote template.html, footer.html, schema.json, data.json, options.json to ${copy}\n`);
    expect((await readdir(copy)).sort()).toEqual(['data.json', 'footer.html', 'options.json', 'schema.json', 'template.html']);
    expect(await readFile(join(copy, 'footer.html'), 'utf8')).toBe(await readFile(join(EXAMPLE, 'footer.html'), 'utf8'));
    expect(JSON.parse(await readFile(join(copy, 'schema.json'), 'utf8'))).toEqual(JSON.parse(await readFile(join(EXAMPLE, 'schema.json'), 'utf8')));
    expect(updated.stdout).toBe(`saved ${id} version 2 (Round trip)\n`);
    const view = JSON.parse(latest.stdout);
    expect(view).toMatchObject({ template_id: id, version: 2, latest_version: 2, name: 'Round trip', html: edited, sample_data: sample });
    expect(view.footer_html).toBe(await readFile(join(EXAMPLE, 'footer.html'), 'utf8'));
    expect(view.options).toEqual({ ...JSON.parse(await readFile(join(EXAMPLE, 'options.json'), 'utf8')), format: 'A5' });
    expect(first.stdout).toMatch(/^version\s+1 \(latest 2\)$/m);
    expect(v2.stderr).toBe('');
    expect(v1.stderr).toBe('');
    expect(await pdfText(join(workDir, 'v2.pdf'))).toContain('Rechnung (Kopie)');
    expect(await pdfText(join(workDir, 'v1.pdf'))).not.toContain('Kopie');
    expect(v1.stdout).toMatch(/^format\s+A4$/m);
    expect(v2.stdout).toMatch(/^format\s+A5$/m);
  });

  it('refuses data failing the schema naming the path, uncharged; a deleted template renders no more; another key sees none of it', async () => {
    // Arrange
    const created = await pdfapi(['template', 'create', '--name', 'To delete', ...exampleFlags, '--json'], { key });
    const id = JSON.parse(created.stdout).template_id as string;
    const bad = join(workDir, 'bad.json');
    await writeFile(bad, JSON.stringify({ ...sample, lines: [{ description: 'Free', quantity: 'one', unit_price: 0 }] }));
    const stranger = await createKey('starter');
    const usedBefore = await quotaUsed(key);

    // Act
    const refused = await pdfapi(['template', 'render', id, '--data', bad, '-o', join(workDir, 'bad.pdf')], { key });
    const foreign = await pdfapi(['template', 'get', id], { key: stranger });
    const foreignRender = await pdfapi(['template', 'render', id], { key: stranger });
    const deleted = await pdfapi(['template', 'delete', id], { key });
    const gone = await pdfapi(['template', 'render', id], { key });

    // Assess
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error invalid_request: .*\/lines\/0\/quantity: must be number/m);
    expectNoStackTrace(refused);
    expect(await readdir(workDir)).not.toContain('bad.pdf');
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toMatch(/^error not_found: /);
    expect(foreignRender.code).toBe(1);
    expect(foreignRender.stderr).toMatch(/^error not_found: /);
    expect(deleted).toMatchObject({ code: 0, stdout: `deleted ${id}\n` });
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^error not_found: /);
    expect(await quotaUsed(key)).toBe(usedBefore);
  });

  it('takes JSON flags inline, as a path or as @path alike', async () => {
    // Arrange: the options as a plain path, the sample inline, the schema as @path
    const options = JSON.parse(await readFile(join(EXAMPLE, 'options.json'), 'utf8')) as Record<string, unknown>;

    // Act
    const created = await pdfapi(
      ['template', 'create', '--name', 'Flags', '--html', join(EXAMPLE, 'template.html'), '--options', join(EXAMPLE, 'options.json'), '--sample', JSON.stringify(sample), '--schema', `@${join(EXAMPLE, 'schema.json')}`, '--json'],
      { key },
    );

    // Assess: saved as the files say
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const saved = JSON.parse(created.stdout) as { options: unknown; sample_data: unknown; data_schema: unknown };
    expect(saved.options).toEqual(options);
    expect(saved.sample_data).toEqual(sample);
    expect(saved.data_schema).toEqual(JSON.parse(await readFile(join(EXAMPLE, 'schema.json'), 'utf8')));
  });

  it.each([
    ['create without --html', ['template', 'create', '--name', 'X'], 2, /required option '--html <file>' not specified/],
    ['a data file that is not JSON', ['template', 'render', 'tpl_x', '--data', 'examples/invoice/template.html'], 1, /^error: --data: examples\/invoice\/template\.html is not JSON \(.+\); give inline JSON, a file, or @file\n$/],
    ['--options that are not JSON', ['template', 'create', '--name', 'X', '--html', 'examples/invoice/template.html', '--options', '{"format":'], 1, /^error: --options: the inline value is not JSON \(.+\); give inline JSON, a file, or @file\n$/],
    ['--options naming no file', ['template', 'create', '--name', 'X', '--html', 'examples/invoice/template.html', '--options', 'nowhere.json'], 1, /^error: --options: cannot read nowhere\.json \(no such file\); give inline JSON, a file, or @file\n$/],
    ['a missing html file', ['template', 'create', '--name', 'X', '--html', '/nonexistent/t.html'], 1, /^error: \/nonexistent\/t\.html: no such file or directory\n$/],
    ['preview without -o', ['template', 'preview', 'tpl_x'], 2, /required option '-o, --output <file>' not specified/],
  ])('%s: a one-line error and a non-zero exit', async (_case, args, code, message) => {
    const run = await pdfapi(args, { key });
    expect(run.code).toBe(code);
    expect(run.stderr).toMatch(message);
    expectNoStackTrace(run);
  });
});
