/**
 * The approach many users start with: launch a browser for each document, print, close. Same
 * executable, flags and fonts as the service; documents one after another.
 */
import type { BenchConfig } from './config.ts';
import { corpusDocument, THROUGHPUT_DOCUMENT } from './corpus.ts';
import { launchLikeService, prepare, printOnPage } from './chromium.ts';
import { checkPdf } from './pdf.ts';
import { round, summarize, type LatencySummary } from './stats.ts';

export interface NaiveResult {
  readonly document: string;
  readonly docs: number;
  readonly perDocument: LatencySummary;
  readonly docsPerSecond: number;
}

export async function runNaive(executablePath: string, config: BenchConfig, mismatches: string[]): Promise<NaiveResult> {
  const prepared = prepare(corpusDocument(THROUGHPUT_DOCUMENT));
  const times: number[] = [];
  const outputs: Uint8Array[] = [];
  for (let i = 0; i < config.naiveDocs; i++) {
    const started = performance.now();
    const browser = await launchLikeService(executablePath);
    try {
      outputs.push(await printOnPage(await browser.newPage(), prepared));
    } finally {
      await browser.close();
    }
    times.push(performance.now() - started);
  }
  for (const bytes of outputs) await checkPdf(bytes, prepared.document.expectedPages, `naive ${THROUGHPUT_DOCUMENT}`, mismatches);
  const totalSeconds = times.reduce((sum, ms) => sum + ms, 0) / 1000;
  return { document: THROUGHPUT_DOCUMENT, docs: config.naiveDocs, perDocument: summarize(times), docsPerSecond: round(config.naiveDocs / totalSeconds, 2) };
}
