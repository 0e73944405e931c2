/**
 * What a fidelity run tells people: a table (printed, and written as Markdown) and an HTML report
 * that puts each differing page of the reference and of ours side by side with the difference in
 * red (a layout shift is seen faster than a number is read).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PIXEL_THRESHOLD, PIXEL_TOLERANCE, RASTER_SCALE, SAMPLE_OVER_PAGES, SIZE_TOLERANCE_PT } from './compare.ts';
import { formatShare, type CaseResult, type ShownPage } from './harness.ts';
import { DEFAULT_SETTLE_MS } from './reference.ts';

export interface RunInfo {
  readonly startedAt: Date;
  readonly browserVersion: string;
  readonly commit?: string;
  readonly durationMs: number;
}

const COLUMNS = ['Document', 'Script', 'Pages ours/ref', 'Sizes', 'Text', 'Boxes ours/ref', 'Worst page pixel diff', 'Verdict'] as const;

function row(result: CaseResult): string[] {
  const pages = result.pages ? `${result.pages.ours}/${result.pages.reference}` : '–';
  const sizes = !result.pages ? '–' : result.sizeMismatches.length ? `differ (${result.sizeMismatches.length})` : 'same';
  const text = !result.pages
    ? '–'
    : result.textMismatches.length === 0
      ? 'same'
      : result.textMismatches[0] === 0
        ? 'differs'
        : `differs (${result.textMismatches.length === 1 ? `p${result.textMismatches[0]}` : `${result.textMismatches.length} pages`})`;
  const worst =
    (!result.worst ? '–' : result.worst.share === 0 ? '0 %' : `${formatShare(result.worst.share)} (p${result.worst.page})`) +
    (result.sampled ? ` (${result.comparedPages} of ${result.pages?.ours} pages)` : '');
  const verdict = { ok: 'ok', differs: 'DIFFERS', error: 'ERROR' }[result.verdict];
  const boxes = result.missingGlyphs ? `${result.missingGlyphs.ours}/${result.missingGlyphs.reference}` : '–';
  return [result.name, result.script ?? '', pages, sizes, text, boxes, worst, verdict];
}

/** The results as a Markdown table, columns padded so it also reads well in a terminal. */
export function formatTable(results: readonly CaseResult[]): string {
  const rows = [COLUMNS.slice() as string[], ...results.map(row)];
  const widths = COLUMNS.map((_, column) => Math.max(...rows.map((cells) => [...cells[column]!].length)));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell + ' '.repeat(widths[column]! - [...cell].length)).join(' | ')} |`;
  const separator = `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`;
  return [line(rows[0]!), separator, ...rows.slice(1).map(line)].join('\n');
}

export function summaryLine(results: readonly CaseResult[]): string {
  const count = (verdict: CaseResult['verdict']) => results.filter((result) => result.verdict === verdict).length;
  return `${results.length} documents: ${count('ok')} within tolerance, ${count('differs')} differ beyond it, ${count('error')} failed to print`;
}

/** What the tolerance is, in one paragraph (the report and docs/fidelity.md say the same). */
export function toleranceText(): string {
  return (
    `Page counts must be equal, page sizes equal within ${SIZE_TOLERANCE_PT} pt, each page's text equal ` +
    `(white space collapsed), our PDF may draw no missing-glyph box (.notdef, "tofu"), and at most ${formatShare(PIXEL_TOLERANCE)} of each page's pixels may differ ` +
    `(pdf.js at ${RASTER_SCALE} px/pt, pixelmatch threshold ${PIXEL_THRESHOLD}, anti-aliased pixels not counted; ` +
    `in npm test, documents over ${SAMPLE_OVER_PAGES} pages on a sample of pages: the first ten, every tenth, the last five). ` +
    `The reference waits ${DEFAULT_SETTLE_MS / 1000} s after load unless a case says otherwise.`
  );
}

/** One sentence per failing case, for a test failure: what differs, where, and where to look. */
export function failureMessage(result: CaseResult, reportPath: string): string {
  const what = result.verdict === 'error' ? `failed to print: ${result.error}` : result.problems.join('; ');
  return `${result.name} (${result.title}): ${what}. Report: ${reportPath}#${anchor(result.name)}`;
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const anchor = (name: string) => `case-${name.replace(/[^a-zA-Z0-9_-]+/g, '-')}`;

function sizeText(size: { width: number; height: number } | undefined): string {
  return size ? `${size.width.toFixed(1)} × ${size.height.toFixed(1)} pt` : 'no such page';
}

function pageFigure(shown: ShownPage): string {
  const image = (file: string | undefined, caption: string) =>
    `<figure>${file ? `<a href="${escapeHtml(file)}"><img src="${escapeHtml(file)}" loading="lazy" alt="${escapeHtml(caption)}"></a>` : '<div class="missing">—</div>'}<figcaption>${escapeHtml(caption)}</figcaption></figure>`;
  const share = shown.share === undefined ? 'not compared (sizes differ or page missing)' : `${formatShare(shown.share)} of pixels differ`;
  return `<div class="page ${shown.beyondTolerance ? 'beyond' : 'within'}">
<h4>Page ${shown.page}: ${escapeHtml(share)}${shown.beyondTolerance ? '' : ' (within tolerance)'}</h4>
<div class="triple">
${image(shown.reference, `reference (plain Chromium), ${sizeText(shown.sizes.reference)}`)}
${image(shown.ours, `ours (the service), ${sizeText(shown.sizes.ours)}`)}
${image(shown.diff, 'difference (red: differs, yellow: anti-aliasing only)')}
</div></div>`;
}

function caseSection(result: CaseResult): string {
  const problems = result.problems.length
    ? `<ul class="problems">${result.problems.map((problem) => `<li>${escapeHtml(problem)}</li>`).join('')}</ul>`
    : '<p>Within tolerance.</p>';
  const text = result.firstTextDifference
    ? `<table class="text"><tr><th>First text difference${result.firstTextDifference.page ? ` (page ${result.firstTextDifference.page})` : ''}</th><td></td></tr>
<tr><th>reference</th><td>${escapeHtml(result.firstTextDifference.reference)}</td></tr>
<tr><th>ours</th><td>${escapeHtml(result.firstTextDifference.ours)}</td></tr></table>`
    : '';
  const timings = [
    result.timings.oursMs !== undefined && `ours ${result.timings.oursMs} ms`,
    result.timings.referenceMs !== undefined && `reference ${result.timings.referenceMs} ms (with its wait)`,
    result.timings.compareMs !== undefined && `comparison ${result.timings.compareMs} ms (pixels of ${result.sampled ? `${result.comparedPages} sampled pages of ${result.pages?.ours}` : result.comparedPages === 1 ? '1 page' : `${result.comparedPages} pages`})`,
  ].filter(Boolean).join(', ');
  const dir = result.name.replace(/[^a-zA-Z0-9_-]+/g, '-');
  const pdfs = result.verdict === 'differs' || result.shown.length > 0
    ? `<p>PDFs: <a href="${escapeHtml(dir)}/reference.pdf">reference</a>, <a href="${escapeHtml(dir)}/ours.pdf">ours</a>.</p>`
    : '';
  const pagesNote = result.pages && result.pages.ours !== result.pages.reference
    ? `<p>Page counts differ, so pages are not compared one to one; the first ${result.shown.length} pages of each are shown side by side.</p>`
    : '';
  return `<section id="${anchor(result.name)}" class="${result.verdict}">
<h3>${escapeHtml(result.name)} <span class="verdict">${result.verdict === 'ok' ? 'ok' : result.verdict === 'error' ? 'ERROR' : 'DIFFERS'}</span></h3>
<p class="title">${escapeHtml(result.title)}${result.script ? ` (script: ${escapeHtml(result.script)})` : ''}</p>
${problems}${text}${pagesNote}${pdfs}
${result.shown.map(pageFigure).join('\n')}
<p class="timings">${escapeHtml(timings)}</p>
</section>`;
}

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #222; }
table.results { border-collapse: collapse; font-size: 0.9rem; }
table.results td, table.results th { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: left; }
tr.differs td, tr.error td { background: #fdecea; }
section { border-top: 2px solid #ddd; margin-top: 2rem; padding-top: 0.5rem; }
section.ok .verdict { color: #1a7f37; } section.differs .verdict, section.error .verdict { color: #c62828; }
.triple { display: grid; grid-template-columns: repeat(3, 1fr); gap: 0.75rem; }
figure { margin: 0; } figure img { width: 100%; border: 1px solid #999; background: #fff; }
figcaption { font-size: 0.8rem; color: #555; }
.missing { border: 1px dashed #999; height: 8rem; display: grid; place-items: center; color: #999; }
.page.within h4 { color: #555; }
table.text th { text-align: left; padding-right: 1rem; vertical-align: top; }
table.text td { font-family: monospace; white-space: pre-wrap; }
.timings, .title { color: #555; font-size: 0.85rem; }
`;

/** Writes report.html and table.md into `outDir` (pictures are already there); returns their paths. */
export async function writeReport(results: readonly CaseResult[], outDir: string, info: RunInfo): Promise<{ html: string; markdown: string }> {
  const markdown = join(outDir, 'table.md');
  const html = join(outDir, 'report.html');
  await writeFile(markdown, `${formatTable(results)}\n\n${summaryLine(results)}.\n`);
  const tableRows = results.map((result) => {
    const cells = row(result);
    cells[0] = `<a href="#${anchor(result.name)}">${escapeHtml(cells[0]!)}</a>`;
    return `<tr class="${result.verdict}">${cells.map((cell, index) => `<td>${index === 0 ? cell : escapeHtml(cell)}</td>`).join('')}</tr>`;
  });
  // Differing and failed cases first, then the rest, each group in corpus order.
  const ordered = [...results.filter((result) => result.verdict !== 'ok'), ...results.filter((result) => result.verdict === 'ok')];
  const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Fidelity report</title><style>${STYLE}</style></head>
<body>
<h1>Fidelity: the service against plain Chromium</h1>
<p>${escapeHtml(summaryLine(results))}. Run ${escapeHtml(info.startedAt.toISOString())}${info.commit ? ` at commit ${escapeHtml(info.commit)}` : ''}, ${escapeHtml(info.browserVersion)}, ${Math.round(info.durationMs / 1000)} s.</p>
<p>${escapeHtml(toleranceText())}</p>
<table class="results"><tr>${COLUMNS.map((column) => `<th>${column}</th>`).join('')}</tr>
${tableRows.join('\n')}
</table>
${ordered.map(caseSection).join('\n')}
</body></html>
`;
  await writeFile(html, page);
  return { html, markdown };
}
