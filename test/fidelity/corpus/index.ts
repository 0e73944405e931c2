/**
 * The fidelity corpus: real-world documents built at run time from the libraries installed from
 * npm (each family's module says what it holds), every one a self-contained HTML string that
 * fetches nothing but data: URLs. Built once per process (well under a second or two). Check the
 * documents in plain Chromium with `node test/fidelity/corpus/check.ts`.
 */
import { businessCases } from './business.ts';
import { chartCases } from './charts.ts';
import { diagramCases } from './diagrams.ts';
import { fontMotionCases } from './fonts-and-motion.ts';
import { frameworkCases } from './frameworks.ts';
import { i18nCases } from './i18n.ts';
import { longCases } from './long.ts';
import { mathCodeCases } from './math-code.ts';
import { pageCssCases } from './page-css.ts';
import { pagedCases } from './paged.ts';
import { scriptCases } from './scripts.ts';
import type { FidelityCase } from './types.ts';

export type { FidelityCase } from './types.ts';

let corpus: Promise<FidelityCase[]> | undefined;

/** Every case of the corpus, in a fixed order; names are unique. */
export function buildCorpus(): Promise<FidelityCase[]> {
  corpus ??= build();
  return corpus;
}

async function build(): Promise<FidelityCase[]> {
  const cases: FidelityCase[] = [
    ...chartCases(),
    ...diagramCases(),
    ...mathCodeCases(),
    ...pagedCases(),
    ...(await frameworkCases()),
    ...longCases(),
    ...fontMotionCases(),
    ...pageCssCases(),
    ...i18nCases(),
    ...businessCases(),
    ...scriptCases(),
  ];
  const names = new Set<string>();
  for (const fidelityCase of cases) {
    if (names.has(fidelityCase.name)) throw new Error(`Duplicate fidelity case name: ${fidelityCase.name}`);
    names.add(fidelityCase.name);
    // The egress guard refuses every fetch but data: URLs; a reference to anything else in the markup or
    // the style sheets is a bug here (what scripts fetch, the dev check sees).
    const markup = fidelityCase.html.replace(/<script>[\s\S]*?<\/script>/g, '');
    const reference = /\s(?:src|href)\s*=\s*["']?(?!data:|#)[^"'\s>]+|url\(\s*["']?(?!data:|#)[^"')\s]+/i.exec(markup);
    if (reference) throw new Error(`Fidelity case ${fidelityCase.name} references ${reference[0].slice(0, 80)}`);
  }
  return cases;
}
