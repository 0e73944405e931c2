/**
 * The cases a run covers: the corpus (corpus/index.ts), or, until it exists, the smoke cases.
 * FIDELITY_CASES (comma-separated names or name prefixes) narrows a run while developing.
 */
import { existsSync } from 'node:fs';
import type { FidelityCase } from './corpus/types.ts';
import { smokeCases } from './smoke-cases.ts';

export async function loadCases(filter = process.env.FIDELITY_CASES): Promise<FidelityCase[]> {
  const corpusUrl = new URL('./corpus/index.ts', import.meta.url);
  const all = existsSync(corpusUrl)
    ? await (import(corpusUrl.href) as Promise<{ buildCorpus(): Promise<FidelityCase[]> }>).then((corpus) => corpus.buildCorpus())
    : smokeCases();
  const wanted = (filter ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (wanted.length === 0) return all;
  const chosen = all.filter((testCase) => wanted.some((name) => testCase.name === name || testCase.name.startsWith(name)));
  if (chosen.length === 0) throw new Error(`FIDELITY_CASES=${filter} matches none of: ${all.map((testCase) => testCase.name).join(', ')}`);
  return chosen;
}
