/**
 * The order test files start in: vitest's own (a project's group, then its files by their last
 * duration when it remembers one), except that on a clean clone, where it remembers none and falls
 * back to the largest file first, the files known to hold a worker longest start first. A long
 * file started last keeps the whole run waiting for it alone; started first, it runs beside the
 * short ones (longest-first is the classic way to end parallel work together).
 *
 * The list is a hint about order, never about results: a file missing from it (or one that became
 * quick) still runs, only later. Measured with `npx vitest run --reporter=json` (docs/architecture.md, "Tests").
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Files that held a worker 25 s or more in a full run on the 2-core machine (2026-11-28), longest first. */
export const LONGEST_FILES: readonly string[] = [
  'test/integration/job-fairness.test.ts',
  'test/integration/lambda-limits.test.ts',
  'test/integration/security.test.ts',
  'test/integration/webhook-fairness.test.ts',
  'test/integration/idempotency-crash.test.ts',
  'test/integration/bulk.test.ts',
  'test/integration/faults.test.ts',
  'test/integration/readiness.test.ts',
  'test/integration/jobs.test.ts',
  'test/integration/health.test.ts',
  'test/integration/self-healing.test.ts',
  'test/integration/batch.test.ts',
  'test/integration/bulk-crash.test.ts',
  'test/integration/limits.test.ts',
];

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const index = LONGEST_FILES.findIndex((path) => spec.moduleId.endsWith('/' + path));
      return index === -1 ? LONGEST_FILES.length : index;
    };
    const remembered = (spec: TestSpecification) =>
      this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`) !== undefined;
    // vitest's order keeps each project's files together; within a project it remembers nothing of,
    // the hint decides (a stable sort: the rest keep vitest's order).
    const ordered: TestSpecification[] = [];
    for (let start = 0; start < sorted.length; ) {
      let end = start;
      while (end < sorted.length && sorted[end]!.project.name === sorted[start]!.project.name) end++;
      const run = sorted.slice(start, end);
      ordered.push(...(run.some(remembered) ? run : [...run].sort((a, b) => rank(a) - rank(b))));
      start = end;
    }
    return ordered;
  }
}
