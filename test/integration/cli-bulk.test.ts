/**
 * Bulk jobs from the client and the CLI (shared/spec/beyond.md "Bulk jobs"), through the local
 * stack as a developer runs them: `pdfapi bulk items.jsonl -o dir/` uploads the file, follows the
 * job with a progress bar, downloads each PDF under its filename or line number with the manifest
 * beside them, and, run again after an interruption, continues the same job (charged once) and
 * fetches only what is missing. The PDFs are checked by reading them.
 */
import { execFile, spawn } from 'node:child_process';
import { access, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPdfApiClient, type JobProgress } from '../../packages/client/src/index.ts';
import { apiUrl, createKey, quotaUsed, type TestKey } from '../support/api.ts';
import { readPdf } from '../support/pdf.ts';

const BIN = join(process.cwd(), 'node_modules', '.bin', 'pdfapi');

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the linked bin as cli.test.ts does; `onStart` gets the child (to interrupt it). */
function pdfapi(args: readonly string[], { key, onStart }: { key: TestKey; onStart?: (child: ReturnType<typeof spawn>) => void }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, {
      env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`, PDFAPI_URL: apiUrl, PDFAPI_KEY: key.apiKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
    onStart?.(child);
  });
}

/** The ZIP's entries and their bytes, as Python's zipfile reads them (after its own CRC check). */
async function zipEntries(path: string): Promise<Map<string, Buffer>> {
  const script = 'import sys, zipfile, json\nz = zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint(json.dumps([[i.filename, z.read(i).hex()] for i in z.infolist()]))';
  const { stdout } = await promisify(execFile)('python3', ['-c', script, path], { maxBuffer: 64 * 1024 * 1024 });
  return new Map((JSON.parse(stdout) as [string, string][]).map(([name, hex]) => [name, Buffer.from(hex, 'hex')]));
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** A line of the input: an invoice, its text naming its number. */
const invoice = (n: number, options: Record<string, unknown> = {}) => JSON.stringify({ html: `<h1>Bulk invoice ${n}</h1>`, options, metadata: { reference_id: `order-${n}` } });

let workDir: string;
let key: TestKey;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'pdfapi-bulk-'));
  key = await createKey('pro');
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('pdfapi bulk', () => {
  it('runs the file as a job and saves every PDF under its filename or line number, the invalid line reported', async () => {
    // Arrange: eight lines, a \r\n file with a BOM (as Windows tools write them); line 3 is invalid,
    // lines 5 and 6 want the same name.
    const lines = [
      invoice(1),
      invoice(2, { filename: 'first-customer' }),
      '{"html": "<p>x</p>", "options": {"format": "A9"}}',
      invoice(4),
      invoice(5, { filename: 'Statement.pdf' }),
      invoice(6, { filename: 'statement.pdf' }),
      invoice(7, { format: 'A5' }),
      invoice(8),
    ];
    const input = join(workDir, 'items.jsonl');
    await writeFile(input, `\ufeff${lines.join('\r\n')}\r\n`);
    const output = join(workDir, 'out');
    const usedBefore = await quotaUsed(key);

    // Act
    const run = await pdfapi(['bulk', input, '-o', output, '--skip-invalid', '--progress'], { key });

    // Assert: exit 1 (a line failed), seven PDFs, the failure named by its line.
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/pdfapi bulk .* \d+\/8 PDFs/);
    expect(run.stdout).toMatch(/^3 +INVALID_OPTIONS +.*format/m);
    expect(run.stdout).toContain(`7 of 8 PDFs saved to ${output}; 1 failed`);
    const files = (await readdir(output)).sort();
    expect(files).toEqual(['.pdfapi-bulk.json', '000001.pdf', '000004.pdf', '000007.pdf', '000008.pdf', 'Statement.pdf', 'first-customer.pdf', 'manifest.jsonl', 'statement (line 6).pdf']);
    const textOf = async (name: string) => (await readPdf(await readFile(join(output, name)))).text;
    expect(await textOf('000001.pdf')).toContain('Bulk invoice 1');
    expect(await textOf('first-customer.pdf')).toContain('Bulk invoice 2');
    expect(await textOf('Statement.pdf')).toContain('Bulk invoice 5');
    expect(await textOf('statement (line 6).pdf')).toContain('Bulk invoice 6');
    const a5 = await readPdf(await readFile(join(output, '000007.pdf')));
    expect(Math.round(a5.pages[0]!.width)).toBe(420);
    const manifest = (await readFile(join(output, 'manifest.jsonl'), 'utf8')).trimEnd().split('\n').map((line) => JSON.parse(line) as { line: number; success: boolean });
    expect(manifest.map((entry) => [entry.line, entry.success])).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((line) => [line, line !== 3]));
    expect(await quotaUsed(key)).toBe(usedBefore + 7);

    // Act again: the same command follows the same job and finds every file there.
    const again = await pdfapi(['bulk', input, '-o', output, '--skip-invalid', '--json'], { key });

    // Assert
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ succeeded: 7, failed: 1, downloaded: 0, already_present: 7, failures: [{ line: 3, code: 'INVALID_OPTIONS' }] });
    expect(await quotaUsed(key)).toBe(usedBefore + 7);
  });

  it('continues the same job after being interrupted, charges it once, and downloads only what is missing', async () => {
    // Arrange: twelve invoices.
    const input = join(workDir, 'resume.jsonl');
    await writeFile(input, `${Array.from({ length: 12 }, (_, index) => invoice(index + 1)).join('\n')}\n`);
    const output = join(workDir, 'resume-out');
    const usedBefore = await quotaUsed(key);

    // Act: killed as soon as the job was accepted (its id written), then run again.
    const interrupted = await pdfapi(['bulk', input, '-o', output], {
      key,
      onStart: (child) => {
        void (async () => {
          while (!(await exists(join(output, '.pdfapi-bulk.json')))) await sleep(20);
          child.kill('SIGKILL');
        })();
      },
    });
    const state = JSON.parse(await readFile(join(output, '.pdfapi-bulk.json'), 'utf8')) as { job_id: string };
    const resumed = await pdfapi(['bulk', input, '-o', output], { key });

    // Assert
    expect(interrupted.code).toBeNull();
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`resuming ${state.job_id}`);
    expect(resumed.stdout).toContain(`12 of 12 PDFs saved to ${output}`);
    expect(await quotaUsed(key)).toBe(usedBefore + 12);

    // Act: two files lost (or never finished), then the command once more.
    await rm(join(output, '000003.pdf'));
    await writeFile(join(output, '000011.pdf'), 'half a file');
    const repaired = await pdfapi(['bulk', input, '-o', output, '--json'], { key });

    // Assert: just those two fetched again, nothing charged.
    expect(repaired.code).toBe(0);
    expect(JSON.parse(repaired.stdout)).toMatchObject({ job_id: state.job_id, downloaded: 2, already_present: 10 });
    expect((await readPdf(await readFile(join(output, '000011.pdf')))).text).toContain('Bulk invoice 11');
    expect(await quotaUsed(key)).toBe(usedBefore + 12);
  });

  it('with --archive, downloads the job’s one ZIP of every PDF, named by filename or line number', async () => {
    // Arrange: four lines, two wanting the same name.
    const input = join(workDir, 'archive.jsonl');
    await writeFile(input, `${[invoice(1), invoice(2, { filename: 'receipt' }), invoice(3, { filename: 'Receipt.pdf' }), invoice(4)].join('\n')}\n`);
    const output = join(workDir, 'archive-out');

    // Act
    const run = await pdfapi(['bulk', input, '-o', output, '--archive', '--json'], { key });

    // Assert: the archive and the manifest, no loose PDFs; each entry is its line's PDF.
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ succeeded: 4, failed: 0, archive: join(output, 'archive.zip') });
    expect((await readdir(output)).sort()).toEqual(['.pdfapi-bulk.json', 'archive.zip', 'manifest.jsonl']);
    const entries = await zipEntries(join(output, 'archive.zip'));
    expect([...entries.keys()]).toEqual(['000001.pdf', 'receipt.pdf', 'Receipt (line 3).pdf', '000004.pdf']);
    for (const [name, line] of [['000001.pdf', 1], ['receipt.pdf', 2], ['Receipt (line 3).pdf', 3], ['000004.pdf', 4]] as const) {
      expect((await readPdf(entries.get(name)!)).text).toContain(`Bulk invoice ${line}`);
    }
  });

  it('refuses a directory another input filled, and a file with an invalid line without --skip-invalid, charging nothing', async () => {
    // Arrange
    const first = join(workDir, 'one.jsonl');
    const other = join(workDir, 'other.jsonl');
    await writeFile(first, `${invoice(1)}\n`);
    await writeFile(other, `${invoice(2)}\n{"html": 5}\n`);
    const output = join(workDir, 'taken');
    expect((await pdfapi(['bulk', first, '-o', output], { key })).code).toBe(0);
    const usedBefore = await quotaUsed(key);

    // Act
    const mixed = await pdfapi(['bulk', other, '-o', output], { key });
    const invalid = await pdfapi(['bulk', other, '-o', join(workDir, 'invalid-out')], { key });

    // Assert
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain('holds the output of another bulk job');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^error invalid_request: .*line 2/m);
    // The way out in the command line's words, not the API's field.
    expect(invalid.stderr).toContain('--skip-invalid');
    expect(invalid.stderr).not.toContain('skip_invalid');
    expect(await exists(join(workDir, 'invalid-out', '.pdfapi-bulk.json'))).toBe(false);
    expect(await quotaUsed(key)).toBe(usedBefore);
  });
});

describe('client bulk', () => {
  it('submits items inline, reports progress while waiting, and reads the manifest', async () => {
    // Arrange
    const api = createPdfApiClient({ baseUrl: apiUrl, apiKey: key.apiKey });
    const usedBefore = await quotaUsed(key);
    const seen: JobProgress[] = [];

    // Act
    const accepted = await api.bulk({ items: [1, 2, 3].map((n) => JSON.parse(invoice(n)) as unknown), options: { format: 'Letter' } });
    const job = await api.waitForJob(accepted.job_id, { intervalMs: 200, onProgress: (progress) => seen.push(progress) });
    const manifest = [];
    for await (const line of api.manifest(accepted.job_id)) manifest.push(line);

    // Assert
    expect(accepted).toMatchObject({ status: 'queued', total: 3 });
    expect(job.status).toBe('succeeded');
    expect(seen.at(-1)).toMatchObject({ status: 'succeeded', total: 3, succeeded: 3, failed: 0 });
    expect(seen.every((progress) => progress.total === 3)).toBe(true);
    expect(manifest.map((line) => line.line)).toEqual([1, 2, 3]);
    const second = manifest[1]!;
    if (!second.success) throw new Error(`line 2 failed: ${second.error.message}`);
    const pdf = await readPdf(await api.download(second.download_url));
    expect(pdf.text).toContain('Bulk invoice 2');
    expect(Math.round(pdf.pages[0]!.width)).toBe(612);
    expect(await quotaUsed(key)).toBe(usedBefore + 3);
  });

  it('uploads a file and submits it by its upload id', async () => {
    // Arrange
    const api = createPdfApiClient({ baseUrl: apiUrl, apiKey: key.apiKey });
    const file = join(workDir, 'client.jsonl');
    await mkdir(workDir, { recursive: true });
    await writeFile(file, `${invoice(1)}\n${invoice(2)}\n`);
    const uploads: string[] = [];

    // Act
    const accepted = await api.bulk({ file, skip_invalid: true }, { onUploaded: (upload) => uploads.push(upload.upload_id) });
    const job = await api.waitForJob(accepted.job_id, { intervalMs: 200 });

    // Assert
    expect(uploads).toEqual([expect.stringMatching(/^upl_/)]);
    expect(job).toMatchObject({ status: 'succeeded', total: 2, succeeded: 2, failed: 0 });
  });
});
