/**
 * The cases a run covers: the corpus (corpus/index.ts), narrowed while developing by
 * FIDELITY_CASES or the runner's arguments (comma-separated names or name prefixes).
 */
import { buildCorpus } from './corpus/index.ts';
import type { FidelityCase } from './corpus/types.ts';

export async function loadCases(filter = process.env.FIDELITY_CASES): Promise<FidelityCase[]> {
  const all = await buildCorpus();
  const wanted = (filter ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (wanted.length === 0) return all;
  const chosen = all.filter((testCase) => wanted.some((name) => testCase.name === name || testCase.name.startsWith(name)));
  if (chosen.length === 0) throw new Error(`"${filter}" matches none of: ${all.map((testCase) => testCase.name).join(', ')}`);
  return chosen;
}
