/**
 * `npm run fidelity`: every case of the corpus printed by the service (a local stack of its own,
 * over HTTP) and by plain Chromium, compared; the table is printed and written with an HTML report
 * under .local/fidelity/ (FIDELITY_OUT to change). Exits non-zero when any case differs beyond
 * tolerance or failed to print.
 *
 *   npm run fidelity                        # everything
 *   npm run fidelity -- chartjs pagedjs     # only cases whose names start so (or FIDELITY_CASES=...)
 *   FIDELITY_CONCURRENCY=1 npm run fidelity # cases one at a time (default 2)
 */
import { execFileSync } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { loadCases } from './cases.ts';
import { formatShare, runCases, type CaseResult } from './harness.ts';
import { launchReference } from './reference.ts';
import { formatTable, summaryLine, toleranceText, writeReport } from './report.ts';
import { REPO_ROOT, startService } from './service.ts';
import { formatImageTable, IMAGE_CASE_NAMES, runImageCase, runThumbnailCase, type ImageCaseResult } from './images.ts';
import { RASTERIZER_TOLERANCE_TEXT } from './rasterizers.ts';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const log = (line: string) => process.stderr.write(`${line}\n`);

function progressLine(result: CaseResult): string {
  const time = [result.timings.oursMs, result.timings.referenceMs, result.timings.compareMs].map((ms) => (ms === undefined ? '–' : `${ms}`));
  const what = result.verdict === 'ok'
    ? `ok${result.worst ? ` (worst page ${formatShare(result.worst.share)})` : ''}`
    : result.verdict === 'error'
      ? `ERROR ${result.error}`
      : `DIFFERS: ${result.problems.join('; ')}`;
  return `  ${result.name}: ${what}  [ours ${time[0]} ms, reference ${time[1]} ms, compare ${time[2]} ms]`;
}

async function main(): Promise<number> {
  const filter = process.argv.slice(2).join(',') || process.env.FIDELITY_CASES;
  const outDir = resolve(REPO_ROOT, process.env.FIDELITY_OUT ?? '.local/fidelity');
  const concurrency = Number(process.env.FIDELITY_CONCURRENCY ?? 2);
  const startedAt = new Date();
  const cases = await loadCases(filter);
  log(`fidelity: ${cases.length} cases, ${concurrency} at a time; report in ${outDir}`);
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });

  const service = await startService(log);
  const reference = await launchReference();
  try {
    const browserVersion = await reference.version();
    const results = await runCases(cases, { service, reference, outDir }, { concurrency, onResult: (result) => log(progressLine(result)) });
    let commit: string | undefined;
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      // not a git checkout: the report just does not name a commit
    }
    const report = await writeReport(results, outDir, {
      startedAt,
      browserVersion,
      ...(commit && { commit }),
      durationMs: Date.now() - startedAt.getTime(),
    });
    console.log(formatTable(results));
    console.log(`\n${summaryLine(results)}.`);
    console.log(toleranceText());
    console.log(`Report: ${report.html}\nTable:  ${report.markdown}`);
    // Pictures (POST /v1/image/generate) against Page.captureScreenshot, the cases chosen ones of the run.
    const imageCases = cases.filter((testCase) => (IMAGE_CASE_NAMES as readonly string[]).includes(testCase.name));
    const images: ImageCaseResult[] = [];
    for (const testCase of imageCases) {
      const result = await runImageCase(testCase, { service, reference, outDir });
      log(`  image ${result.name}: ${result.verdict}${result.error ? ` ${result.error}` : result.differingPixels ? ` (${result.differingPixels} pixels differ)` : ''}`);
      images.push(result);
    }
    // Thumbnails against pdftoppm's rendering of the same first page, compared as two rasterizers'
    // pictures (rasterizers.ts); a case whose reference is known to be wrong is shown, not counted.
    const thumbnails: ImageCaseResult[] = [];
    for (const testCase of imageCases) {
      const result = await runThumbnailCase(testCase, { service, outDir });
      log(`  ${result.name}: ${result.verdict}${result.error ? ` ${result.error}` : ` (${result.differingPixels} pixels differ)`}${result.referenceDefect ? ` (not gated: ${result.referenceDefect})` : ''}`);
      thumbnails.push(result);
    }
    const gatedThumbnails = thumbnails.filter((result) => !result.referenceDefect);
    if (images.length > 0) {
      const table = formatImageTable([...images, ...thumbnails]);
      const within = gatedThumbnails.filter((result) => result.verdict === 'ok').length;
      const summary =
        `Images: ${images.filter((result) => result.verdict === 'ok').length} of ${images.length} pixel-identical to Page.captureScreenshot; ` +
        `thumbnails: ${within} of ${gatedThumbnails.length} within tolerance of pdftoppm (${thumbnails.length - gatedThumbnails.length} not gated: the reference is wrong). ` +
        `Tolerance: ${RASTERIZER_TOLERANCE_TEXT}.`;
      await writeFile(join(outDir, 'images.md'), `${table}\n\n${summary}\n`);
      console.log(`\n${table}\n\n${summary}`);
    }
    const picturesOk = [...images, ...gatedThumbnails].every((result) => result.verdict === 'ok');
    return results.every((result) => result.verdict === 'ok') && picturesOk ? 0 : 1;
  } finally {
    await reference.close().catch(() => undefined);
    await service.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(2);
  },
);
