/**
 * Reading and checking a bulk job's input into its plan, in memory that does not grow with the
 * refused lines: a plain function of the lines (lib/bulk/upload-lines.ts reads them), run in a
 * worker thread by the submission (./upload-check-pool.ts) and tested in-process.
 *
 * What it keeps, whatever the input:
 * - the first NAMED_PROBLEMS problems (the 400 names them) and the count of the others;
 * - the plan of chunks (one per LINES_PER_CHUNK valid lines, so it grows with the valid lines,
 *   which the job runs anyway); a chunk's refused lines are named with their problem for the job's
 *   first PLANNED_PROBLEMS refused lines and by number alone after (8 bytes a line, not ~100);
 * - without `skip_invalid`, the job is refused once more than MAX_INVALID_LINES lines are invalid:
 *   reading stops there (`stoppedAt`), so a file of a million invalid lines costs what its first
 *   thousand do, and the 400 says "at least" how many.
 */
import { namesTemplateWithoutVersion } from '#lib/documents/batch.ts';
import type { PlannedChunk } from './bulk-records.ts';
import { UploadRefusedError, type LineProblem, type UploadLine } from './upload-lines.ts';

/** Lines a chunk holds (valid ones; lines refused at submission ride along): see docs/bulk-jobs.md for why 10. */
export const LINES_PER_CHUNK = 10;
/**
 * Lines a chunk holds at most, valid or refused: a run of refused lines is split over chunks of this
 * many, so a worker never reads back, checks and records more than this many lines at once (an
 * upload of 1,000,000 refused lines and one valid one is 1,001 chunks, not one of 1,000,001 lines).
 */
export const MAX_LINES_PER_CHUNK = 1_000;
/** The most invalid lines a 400 names. */
export const NAMED_PROBLEMS = 20;
/**
 * Without `skip_invalid`, invalid lines past this many refuse the job at once: reading stops at the
 * next one, the rest of the file unread.
 */
export const MAX_INVALID_LINES = 1_000;
/** Refused lines kept in the plan with their problem (for a chunk given up unread); the others by number. */
export const PLANNED_PROBLEMS = 1_000;

export type NumberedProblem = LineProblem & { readonly line: number };

/** What reading the input decided. */
export type UploadCheck =
  | {
      readonly plan: PlannedChunk[];
      /** The first NAMED_PROBLEMS invalid lines. */
      readonly problems: NumberedProblem[];
      /** Invalid lines read (all of them, unless reading stopped early). */
      readonly invalid: number;
      readonly valid: number;
      /** Lines read. */
      readonly total: number;
      /** The templates valid lines name without a version: each is pinned to its latest when the job is made. */
      readonly unpinnedTemplates: string[];
      /** The line where reading stopped, more than MAX_INVALID_LINES being invalid (without skip_invalid). */
      readonly stoppedAt?: number;
    }
  /** The upload as a whole cannot be a job (too large, too many lines, none): the 400's words. */
  | { readonly refused: string };

/** A chunk being planned: its lines so far. */
interface PlanningChunk {
  first: number;
  last: number;
  start: number;
  end: number;
  valid: number;
  invalid: NonNullable<PlannedChunk['invalid']>[number][];
}

const planned = ({ first, last, start, end, invalid }: PlanningChunk): PlannedChunk => ({ first, last, start, end, ...(invalid.length > 0 && { invalid }) });

/** Reads and checks every line as it streams in (until the bound, without `skipInvalid`); the chunks of the valid ones, and what the others were. */
export async function planInput(lines: AsyncIterable<UploadLine>, { skipInvalid = true }: { skipInvalid?: boolean } = {}): Promise<UploadCheck> {
  const plan: PlannedChunk[] = [];
  const problems: NumberedProblem[] = [];
  const unpinnedTemplates = new Set<string>();
  let valid = 0;
  let invalid = 0;
  let total = 0;
  let current: PlanningChunk | undefined;
  try {
    for await (const line of lines) {
      total = line.line;
      // A chunk holds LINES_PER_CHUNK valid lines; invalid ones ride along with the chunk they fall
      // in, up to MAX_LINES_PER_CHUNK lines in all.
      if (!current || current.last - current.first + 1 === MAX_LINES_PER_CHUNK || (!line.error && current.valid === LINES_PER_CHUNK)) {
        if (current) plan.push(planned(current));
        current = { first: line.line, last: line.line, start: line.start, end: line.end, valid: 0, invalid: [] };
      }
      current.last = line.line;
      current.end = line.end;
      if (line.error) {
        invalid++;
        if (problems.length < NAMED_PROBLEMS) problems.push({ line: line.line, ...line.error });
        if (!skipInvalid && invalid > MAX_INVALID_LINES) {
          // The job is refused whatever follows: stop reading (the caller's loop ends the stream).
          return { plan: [], problems, invalid, valid, total, unpinnedTemplates: [...unpinnedTemplates], stoppedAt: line.line };
        }
        current.invalid.push(invalid <= PLANNED_PROBLEMS ? { line: line.line, code: line.error.code, message: line.error.message } : line.line);
      } else {
        valid++;
        current.valid++;
        if (namesTemplateWithoutVersion(line.item)) unpinnedTemplates.add(line.item.template_id);
      }
    }
  } catch (error) {
    if (error instanceof UploadRefusedError) return { refused: error.message };
    throw error;
  }
  if (current) plan.push(planned(current));
  return { plan, problems, invalid, valid, total, unpinnedTemplates: [...unpinnedTemplates] };
}

const count = (n: number) => n.toLocaleString('en-US');

/** The invalid lines by number and problem, the first NAMED_PROBLEMS of them, and how many more. */
function listProblems(check: Extract<UploadCheck, { plan: unknown }>): string {
  const named = check.problems.map((problem) => `line ${problem.line}: ${problem.message}`);
  const more = check.invalid - check.problems.length;
  if (more <= 0) return named.join('; ');
  return named.join('; ') + (check.stoppedAt === undefined ? `; and ${more} more` : `; and at least ${count(more)} more`);
}

/**
 * Why a checked input cannot be a job, or undefined when it can: no valid line (skip_invalid or not:
 * there is nothing to run, so no advice to skip), or invalid lines without `skip_invalid` (the
 * count, "at least" when reading stopped at the bound, and the first NAMED_PROBLEMS named).
 */
export function refusalOf(check: UploadCheck, { skipInvalid }: { skipInvalid: boolean }): string | undefined {
  if ('refused' in check) return check.refused;
  if (check.stoppedAt !== undefined) {
    const counted = `At least ${count(check.invalid)} lines are not valid batch items (reading stopped at line ${count(check.stoppedAt)}, past ${count(MAX_INVALID_LINES)} invalid lines)`;
    const advice = check.valid > 0 ? ' (send "skip_invalid": true to run the others)' : '';
    return `${counted}${advice}: ${listProblems(check)}`;
  }
  if (check.valid === 0) {
    const lines = check.total === 1 ? 'The only line is not a valid batch item' : `None of the ${check.total} lines is a valid batch item`;
    return `${lines}: ${listProblems(check)}`;
  }
  if (check.invalid > 0 && !skipInvalid) {
    const counted = check.invalid === 1 ? '1 line is not a valid batch item' : `${check.invalid} lines are not valid batch items`;
    return `${counted} (send "skip_invalid": true to run the others): ${listProblems(check)}`;
  }
  return undefined;
}
