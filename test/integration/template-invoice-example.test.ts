/**
 * The worked invoice example of docs/templates.md, run as a reader runs it: every shell block of
 * the section after the one that starts the service, in order, in bash, from a directory holding
 * the checkout's examples/ (and node_modules/, for npx pdfapi), against the local stack. Then the
 * PDFs they wrote are read: the invoice's data, formatted for de-DE and en-US, its page numbers and
 * its payment QR code.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiUrl, createKey, quotaUsed, type TestKey } from '../support/api.ts';
import { findItem, normalizeText, POINTS_PER_MM, readPdf } from '../support/pdf.ts';
import { inkIn, rasterizePage } from '../support/raster.ts';

const DOCS = 'docs/templates.md';
const SECTION = '## Worked example: an invoice with a payment QR';
const DOCUMENTED_URL = 'http://127.0.0.1:3000';

/** The section's shell blocks, in order. */
async function documentedCommands(): Promise<string[]> {
  const markdown = await readFile(DOCS, 'utf8');
  const start = markdown.indexOf(`\n${SECTION}\n`);
  if (start < 0) throw new Error(`${DOCS} has no section "${SECTION}"`);
  const rest = markdown.slice(start + SECTION.length + 2);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

let key: TestKey;
let workDir: string;
let run: { stdout: string; stderr: string };
let usedBefore: number;

beforeAll(async () => {
  key = await createKey('pro');
  workDir = await mkdtemp(join(tmpdir(), 'invoice-example-'));
  await symlink(join(process.cwd(), 'examples'), join(workDir, 'examples'));
  await symlink(join(process.cwd(), 'node_modules'), join(workDir, 'node_modules'));
  const [setup, ...blocks] = await documentedCommands();
  // The first block starts the service and makes the key: the test's stack and key stand in for them.
  expect(setup).toMatch(/^npm start\b/m);
  expect(setup).toMatch(/^KEY=pdfk_/m);
  const script = ['set -euo pipefail', ...blocks].join('\n').replaceAll(DOCUMENTED_URL, apiUrl);
  usedBefore = await quotaUsed(key);
  run = await promisify(execFile)('bash', ['-c', script], {
    cwd: workDir,
    // Node 24 first on PATH, as `npm ci` in the checkout gives `npx`; the CLI's default address is
    // the documented one, so it is given the test stack's as the URLs in the commands are.
    env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`, KEY: key.apiKey, PDFAPI_URL: apiUrl },
    timeout: 240_000,
  });
}, 300_000);

const textOf = async (file: string) => normalizeText((await readPdf(await readFile(join(workDir, file)))).text);

describe('docs/templates.md, the worked invoice example', () => {
  it('saves the template and renders the invoice in de-DE: amounts, dates, numbers and page numbers as German writes them', async () => {
    const german = await textOf('invoice-de.pdf');
    for (const expected of ['Rechnung', 'Rechnungsnummer 2026-0042', 'Rechnungsdatum 2. März 2026', 'Fällig am 16. März 2026', 'Support, hours 2,5 16,00 € 40,00 €', 'Nettobetrag 1.040,00 €', 'USt. 19 % 197,60 €', 'Gesamtbetrag 1.237,60 €', 'Muster Design GmbH · 2026-0042 1 / 1']) {
      expect(german).toContain(expected);
    }
    // The preview is the same document, with its mark (docs/templates.md "Previews") on the page.
    const preview = await textOf('invoice-preview.pdf');
    expect(preview).toContain('PREVIEW');
    expect(normalizeText(preview.replace('PREVIEW', ''))).toBe(german);
  });

  it('renders the same data with locale en-US as English writes it', async () => {
    const english = await textOf('invoice-en.pdf');
    for (const expected of ['Invoice number 2026-0042', 'Invoice date March 2, 2026', 'Due date March 16, 2026', 'Support, hours 2.5 €16.00 €40.00', 'Subtotal €1,040.00', 'VAT 19% €197.60', 'Total €1,237.60', '1 / 1']) {
      expect(english).toContain(expected);
    }
  });

  it('draws the payment QR code above its caption', async () => {
    const bytes = await readFile(join(workDir, 'invoice-de.pdf'));
    const page = (await readPdf(bytes)).pages[0]!;
    const caption = findItem(page, 'Mit Ihrer Banking-App');
    const raster = await rasterizePage(bytes, 1, 3);
    // The code (32 mm square, 1 mm above its caption, centred on it): the middle 20 mm of it, in
    // points from the top left; the caption's baseline is in points from the bottom left.
    const side = 32 * POINTS_PER_MM;
    const centre = { x: caption.x + caption.width / 2, y: page.height - (caption.y + caption.fontSize) - POINTS_PER_MM - side / 2 };
    const inner = 20 * POINTS_PER_MM;
    const code = inkIn(raster, { x: centre.x - inner / 2, y: centre.y - inner / 2, width: inner, height: inner });
    // A QR code is about half dark modules: neither an empty box nor a block of text or colour.
    expect(code.coverage).toBeGreaterThan(0.3);
    expect(code.coverage).toBeLessThan(0.7);
  });

  it('refuses data failing the schema naming the path; charges the two renders and the CLI’s, never a preview', async () => {
    expect(run.stdout).toContain('"message":"data does not match the template\'s data_schema: /lines/0/quantity: must be number"');
    // 2 generates through curl, then through the CLI: render and render --version 1.
    expect(await quotaUsed(key)).toBe(usedBefore + 4);
  });

  it('from the command line: preview, render, get -o, update to version 2, render version 1', async () => {
    expect(run.stdout).toMatch(/^tpl_\w+$/m);
    expect(await textOf('preview.pdf')).toContain('Gesamtbetrag 1.237,60 €');
    expect(await textOf('invoice.pdf')).toContain('Gesamtbetrag 1.237,60 €');
    expect(await readFile(join(workDir, 'my-invoice', 'footer.html'), 'utf8')).toBe(await readFile('examples/invoice/footer.html', 'utf8'));
    expect(run.stdout).toMatch(/^saved tpl_\w+ version 2 \(Invoice\)$/m);
    expect(await textOf('invoice-v1.pdf')).not.toContain('Kopie');
    expect(run.stdout).toMatch(/^tpl_\w+\s+2\s+\S+\s+Invoice$/m);
  });
});
