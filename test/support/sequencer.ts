/**
 * The order test files start in. Groups run one after another (vitest's `sequence.groupOrder`);
 * inside a group, whichever project a file belongs to, the longest start first (longest-first is
 * the classic way to end parallel work together: a long file started last keeps the whole run
 * waiting for it alone, and short ones left for the end fill the workers the long ones free).
 *
 * How long a file takes: what vitest remembers of the last run when it remembers it; on a clean
 * clone (CI), where it remembers none, the files known to hold a worker longest come first, then
 * the projects whose files mostly wait (fidelity, integration) before those bound by the CPU (cdk,
 * unit), whose short files fill the end of the group.
 *
 * The list is a hint about order, never about results: a file missing from it (or one that became
 * quick) still runs, only later. Measured with `npx vitest run --reporter=json` (docs/architecture.md, "Tests").
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Files that held a worker 30 s or more in a full run on the 2-core machine (2026-11-28), longest first. */
export const LONGEST_FILES: readonly string[] = [
  'test/fidelity/fidelity.test.ts',
  'test/integration/lambda-limits.test.ts',
  'test/integration/security.test.ts',
  'test/integration/job-fairness.test.ts',
  'test/integration/batch.test.ts',
  'test/integration/bulk.test.ts',
  'test/integration/bulk-crash.test.ts',
  'test/integration/webhook-fairness.test.ts',
  'test/integration/jobs.test.ts',
  'test/integration/limits.test.ts',
  'test/integration/templates.test.ts',
  'test/integration/cli.test.ts',
  'test/integration/idempotency-crash.test.ts',
  'test/integration/readiness.test.ts',
  'test/integration/overload.test.ts',
  'test/integration/self-healing.test.ts',
  'test/integration/faults.test.ts',
  'test/integration/health.test.ts',
];

/** On a clean clone, after the hinted files: projects whose files mostly wait before those bound by the CPU. */
const PROJECTS_FIRST_TO_LAST: readonly string[] = ['fidelity', 'integration', 'lambda', 'cdk', 'unit'];

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const remembered = (spec: TestSpecification) =>
      this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`)?.duration;
    const hintRank = (spec: TestSpecification) => {
      const index = LONGEST_FILES.findIndex((path) => spec.moduleId.endsWith('/' + path));
      return index === -1 ? LONGEST_FILES.length : index;
    };
    const projectRank = (spec: TestSpecification) => {
      const index = PROJECTS_FIRST_TO_LAST.indexOf(spec.project.name);
      return index === -1 ? PROJECTS_FIRST_TO_LAST.length : index;
    };
    // vitest's own order first (by group, then its fallbacks: failed, then longest, then largest);
    // then, group by group, the longest first across the group's projects (a stable sort).
    const sorted = await super.sort(files);
    const ordered: TestSpecification[] = [];
    for (let start = 0; start < sorted.length; ) {
      const group = sorted[start]!.project.config.sequence.groupOrder;
      let end = start;
      while (end < sorted.length && sorted[end]!.project.config.sequence.groupOrder === group) end++;
      const run = sorted.slice(start, end);
      const allRemembered = run.every((spec) => remembered(spec) !== undefined);
      ordered.push(
        ...[...run].sort(
          allRemembered
            ? (a, b) => remembered(b)! - remembered(a)!
            : (a, b) => hintRank(a) - hintRank(b) || projectRank(a) - projectRank(b),
        ),
      );
      start = end;
    }
    return ordered;
  }
}
