/**
 * wkhtmltopdf and WeasyPrint through their command lines, when installed (Debian packages
 * `wkhtmltopdf`, `weasyprint`; the benchmark never installs them). Each run is a fresh process, as
 * a user scripting them would run it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { BenchConfig } from './config.ts';
import { corpusDocument, THROUGHPUT_DOCUMENT } from './corpus.ts';
import { pageCount } from './pdf.ts';
import { round, summarize, type LatencySummary } from './stats.ts';

const run = promisify(execFile);

export type CliResult =
  | { readonly tool: string; readonly installed: false }
  | {
      readonly tool: string;
      readonly installed: true;
      readonly version: string;
      readonly document: string;
      readonly perDocument: LatencySummary;
      readonly docsPerSecond: number;
      /** Page count of its PDF: it lays the document out with its own engine, so it may differ. */
      readonly pages: number;
    };

interface Tool {
  readonly name: string;
  readonly command: string;
  readonly versionArgs: string[];
  readonly args: (input: string, output: string) => string[];
}

const TOOLS: readonly Tool[] = [
  {
    name: 'wkhtmltopdf',
    command: 'wkhtmltopdf',
    versionArgs: ['--version'],
    // A4 and the invoice's margins, like the API request; --quiet keeps progress bars off stderr.
    args: (input, output) => ['--quiet', '--page-size', 'A4', '-T', '15mm', '-B', '15mm', '-L', '12mm', '-R', '12mm', input, output],
  },
  {
    name: 'WeasyPrint',
    command: 'weasyprint',
    versionArgs: ['--version'],
    // Page size and margins come from CSS @page for WeasyPrint; the invoice's are given as a stylesheet.
    args: (input, output) => ['--quiet', '--stylesheet', `${input}.page.css`, input, output],
  },
];

async function which(command: string): Promise<string | undefined> {
  return run('which', [command]).then(({ stdout }) => stdout.trim() || undefined, () => undefined);
}

export async function runCliTools(config: BenchConfig, log: (line: string) => void): Promise<CliResult[]> {
  const document = corpusDocument(THROUGHPUT_DOCUMENT);
  const dir = mkdtempSync(join(tmpdir(), 'pdf-bench-cli-'));
  const input = join(dir, `${document.name}.html`);
  writeFileSync(input, document.html);
  writeFileSync(`${input}.page.css`, '@page { size: A4; margin: 15mm 12mm; }');
  const results: CliResult[] = [];
  try {
    for (const tool of TOOLS) {
      if (!(await which(tool.command))) {
        log(`${tool.name}: not installed`);
        results.push({ tool: tool.name, installed: false });
        continue;
      }
      const version = (await run(tool.command, tool.versionArgs).then((r) => r.stdout + r.stderr, () => '')).trim().split('\n')[0] ?? '';
      const output = join(dir, `${tool.command}.pdf`);
      const times: number[] = [];
      let pages = 0;
      for (let i = 0; i < config.cliRuns + 1; i++) {
        rmSync(output, { force: true });
        const started = performance.now();
        await run(tool.command, tool.args(input, output), { env: { ...process.env, QT_QPA_PLATFORM: 'offscreen' } });
        const ms = performance.now() - started;
        if (i > 0) times.push(ms); // the first run warms the disk cache and is not counted
        pages = await pageCount(readFileSync(output));
      }
      const perDocument = summarize(times);
      results.push({ tool: tool.name, installed: true, version, document: document.name, perDocument, docsPerSecond: round(1000 / perDocument.p50, 2), pages });
      log(`${tool.name} (${version}): p50 ${perDocument.p50} ms per document, ${pages} pages`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}
