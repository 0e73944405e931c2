/**
 * The fidelity corpus: real-world documents built at run time from the libraries installed from
 * npm (test/fidelity/corpus/README... see each family's module). Built once per process.
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
  const cases: FidelityCase[] = [...chartCases(), ...diagramCases(), ...mathCodeCases(), ...pagedCases(), ...(await frameworkCases()), ...longCases(), ...fontMotionCases(), ...pageCssCases(), ...i18nCases(), ...businessCases(), ...scriptCases()];
  const names = new Set<string>();
  for (const fidelityCase of cases) {
    if (names.has(fidelityCase.name)) throw new Error(`Duplicate fidelity case name: ${fidelityCase.name}`);
    names.add(fidelityCase.name);
  }
  return cases;
}
