/**
 * `pdfapi bulk items.jsonl -o dir/ [--archive] [--skip-invalid]`: a bulk job from a JSON Lines file
 * (shared/spec/beyond.md "Bulk jobs"), followed with a progress bar, its PDFs (or, with --archive,
 * its one ZIP) downloaded into the directory, with the manifest beside them (manifest.jsonl).
 *
 * Resume: the job's id is kept in `<dir>/.pdfapi-bulk.json` with a hash of what made it (the input
 * file's bytes and every flag that changes the job), written the moment the job is accepted. Run
 * the same command again after an interruption (Ctrl-C, a lost connection, a closed laptop) and it
 * follows the same job instead of submitting (and paying for) a new one, and downloads only what is
 * not in the directory yet: a file is written under a temporary name and renamed once whole, so a
 * name present is a file complete. The same directory with other input is refused, never mixed.
 *
 * Files are named as in the job's archive: the line's `filename` option, or its line number
 * (`000123.pdf`), with the extension of what the line made (the manifest line's `content_type`: a
 * picture's `.png`, `.jpg`, `.webp`; `.pdf` when a manifest does not say); two lines with the same
 * name are told apart by line number.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, writeFileSync } from 'node:fs';
import { access, constants, mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { SingleBar } from 'cli-progress';
import { Command } from 'commander';
import { fetchDownload, PdfApiError, type BulkJob, type BulkResult, type DocumentOptions, type Job, type ManifestLine, type PdfApiClient } from '../../client/src/index.ts';
import { extensionOf, safePdfFilename, terminalJson, terminalText } from './untrusted.ts';

/** What the bulk command takes from main.ts (so the two files do not import each other). */
export interface BulkKit {
  client(command: Command): PdfApiClient;
  usageError(message: string): Error;
  withDocumentFlags(command: Command): Command;
  documentOptions(command: Command): DocumentOptions;
  /** The batch command's progress bar, on standard error: `pdfapi <name> [bar] value/total PDFs | stage | time`. */
  progressBar(name: string, show: boolean): SingleBar;
  printTable(table: readonly (readonly string[])[]): void;
}

/** Where the job a directory is being filled from is remembered. */
export const STATE_FILE = '.pdfapi-bulk.json';
/** The job's manifest, saved beside its PDFs. */
export const MANIFEST_FILE = 'manifest.jsonl';
/** The job's ZIP, with --archive. */
export const ARCHIVE_FILE = 'archive.zip';
const DOWNLOADS_AT_ONCE = 8;
/** Failures listed after the run (all of them are in the manifest). */
const FAILURES_SHOWN = 20;

interface BulkFlags {
  output: string;
  archive?: boolean;
  skipInvalid?: boolean;
  webhookUrl?: string;
  progress?: boolean;
  json?: boolean;
}

interface State {
  readonly job_id: string;
  /** SHA-256 of the input file and of the flags that shape the job. */
  readonly input_sha256: string;
  readonly base_url: string;
  readonly submitted_at: string;
}

/** The hash of what makes the job: the file's bytes, the options and flags, the service. */
async function jobHash(file: string, request: unknown): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash, { end: false });
  hash.update('\0');
  hash.update(JSON.stringify(request));
  return hash.digest('hex');
}

async function readState(dir: string): Promise<State | undefined> {
  try {
    const state = JSON.parse(await readFile(join(dir, STATE_FILE), 'utf8')) as Partial<State>;
    if (typeof state.job_id === 'string' && typeof state.input_sha256 === 'string') return state as State;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  }
  return undefined;
}

/** Written synchronously, then renamed over the old: a crash leaves the old state or the new, whole. */
async function writeState(dir: string, state: State): Promise<void> {
  const path = join(dir, STATE_FILE);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  await rename(`${path}.tmp`, path);
}

/** What an input line asks its file to be called: its own `filename` option, if it parses and has one (Names adds the extension). */
function filenameOf(text: string, shared: DocumentOptions): string | undefined {
  try {
    const item = JSON.parse(text) as { options?: { filename?: unknown } };
    const name = item?.options?.filename ?? (shared as { filename?: unknown }).filename;
    return typeof name === 'string' && name !== '' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The input file's lines as the service numbers them: \n ends a line (a \r before it is dropped), a leading BOM is skipped. */
async function* inputLines(file: string): AsyncGenerator<string> {
  let pending = '';
  // ignoreBOM false: a BOM at the start is consumed, as the service skips it.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: false });
  for await (const chunk of createReadStream(file)) {
    pending += decoder.decode(chunk as Buffer, { stream: true });
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) yield line.endsWith('\r') ? line.slice(0, -1) : line;
  }
  pending += decoder.decode();
  if (pending !== '') yield pending.endsWith('\r') ? pending.slice(0, -1) : pending;
}

/** The extension a manifest line's file is saved with: its `content_type`'s, `.pdf` when it has none (a manifest from before pictures). */
export function manifestExtension(entry: ManifestLine): string {
  return extensionOf(entry.success ? entry.content_type : undefined);
}

/**
 * Each file's name, line by line: safe on every filesystem (the names come from the input, but
 * a file is still no place for a path), unique ignoring case and Unicode normalisation, the same on
 * every run for the same input (so a resumed run finds the files it wrote).
 */
export class Names {
  readonly #taken = new Set<string>();
  readonly #digits: number;
  constructor(total: number) {
    this.#digits = Math.max(6, String(total).length);
  }
  /** The name of `line`'s file: its `filename` (or its number), ending in `extension`. */
  next(line: number, filename: string | undefined, extension = 'pdf'): string {
    const numberedStem = String(line).padStart(this.#digits, '0');
    const numbered = `${numberedStem}.${extension}`;
    const wanted = filename === undefined ? numbered : safePdfFilename(filename, numberedStem, extension);
    const stem = wanted.slice(0, -(extension.length + 1));
    for (const candidate of [wanted, `${stem} (line ${line}).${extension}`]) {
      const key = candidate.normalize('NFC').toLowerCase();
      if (!this.#taken.has(key) && key !== MANIFEST_FILE && key !== ARCHIVE_FILE) {
        this.#taken.add(key);
        return candidate;
      }
    }
    // Taken even with its line number (another line's filename was exactly that): the line number alone is unique.
    this.#taken.add(numbered.toLowerCase());
    return numbered;
  }
}

const exists = (path: string) =>
  access(path, constants.F_OK).then(
    () => true,
    () => false,
  );

/** Streams a response's body into `path`, through `<path>.part`, renamed once whole. */
async function saveResponse(response: Response, path: string): Promise<void> {
  const partial = `${path}.part`;
  try {
    await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>), createWriteStream(partial));
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

/** A download link's file (no key: the link is the credential), into `path`. */
async function downloadTo(url: string, path: string): Promise<void> {
  await saveResponse(await fetchDownload(url), path);
}

/** Runs `work` over what `items` yields, at most `limit` at a time, reading `items` only as fast as the work goes. */
async function eachLimited<T>(items: AsyncIterable<T>, limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const iterator = items[Symbol.asyncIterator]();
  let failure: unknown;
  const worker = async () => {
    for (;;) {
      const next = await iterator.next();
      if (next.done || failure !== undefined) return;
      try {
        await work(next.value);
      } catch (error) {
        failure ??= error;
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  if (failure !== undefined) throw failure;
}

/** Between two reads of a running job: 1 s while its counts move, growing to 10 s only while they do not. */
export const POLL_MIN_MS = 1_000;
export const POLL_MAX_MS = 10_000;

/** What the last read of the job saw, for the next wait. */
export interface PollState {
  /** The job's status and counts, as read (undefined: not read yet, or the read was refused). */
  readonly seen: string | undefined;
  readonly waitMs: number;
}

/**
 * How long to wait before the next read of a job, paced by the server: its `Retry-After` when it
 * sends one (a busy or rate-limited answer, or the job's own), else the job's progress: a read that
 * saw the counts move is followed 1 s later (lines are finishing: the bar keeps up), and only reads
 * that saw nothing new wait longer, up to 10 s (a job waiting its turn). A growing backoff alone
 * left the bar up to 10 s behind the server while lines finished.
 */
export function nextPoll(previous: PollState, read: { readonly seen: string | undefined; readonly retryAfterSeconds?: number | undefined }): PollState {
  const moved = read.seen !== undefined && read.seen !== previous.seen;
  const waitMs = moved ? POLL_MIN_MS : Math.min(POLL_MAX_MS, Math.max(POLL_MIN_MS, previous.waitMs * 1.5));
  const told = read.retryAfterSeconds !== undefined && Number.isFinite(read.retryAfterSeconds) && read.retryAfterSeconds >= 0 ? read.retryAfterSeconds * 1000 : undefined;
  return { seen: read.seen ?? previous.seen, waitMs: told ?? waitMs };
}

const jobEnded = (job: Job) => {
  const status = job.status as string;
  return status === 'succeeded' || status === 'failed' || (status === 'cancelled' && job.completed_at !== undefined);
};

/**
 * Reads the job until it ended, pacing the reads by `nextPoll`; `onProgress` after each read. The
 * client retries a 429 or 503 itself (honouring Retry-After); one it gave up on does not end the
 * follow: the job goes on, and is read again when the API said.
 */
async function followJob(api: PdfApiClient, jobId: string, onProgress: (job: BulkJob) => void): Promise<BulkJob> {
  let poll: PollState = { seen: undefined, waitMs: POLL_MIN_MS };
  for (;;) {
    let job: BulkJob;
    try {
      job = await api.job(jobId);
    } catch (error) {
      if (!(error instanceof PdfApiError) || (error.status !== 429 && error.status !== 503)) throw error;
      const retryAfter = error.details.retry_after;
      poll = nextPoll(poll, { seen: undefined, retryAfterSeconds: typeof retryAfter === 'number' ? retryAfter : undefined });
      await new Promise((resolve) => setTimeout(resolve, poll.waitMs));
      continue;
    }
    onProgress(job);
    if (jobEnded(job)) return job;
    poll = nextPoll(poll, { seen: `${job.status} ${job.succeeded ?? 0} ${job.failed ?? 0}` });
    await new Promise((resolve) => setTimeout(resolve, poll.waitMs));
  }
}

function jobFailure(job: Job): Error {
  const result = job.result as { error?: { code?: string; message?: string } } | undefined;
  return new PdfApiError(0, String(result?.error?.code ?? 'job_failed'), String(result?.error?.message ?? `job ${job.job_id} failed`));
}

export function bulkCommand(kit: BulkKit): Command {
  const command = new Command('bulk')
    .description(
      'Run a bulk job from a JSON Lines file (one batch item per line) and download its PDFs into a directory. Run it again after an interruption to continue the same job.',
    )
    .argument('<file>', 'the JSON Lines file: one batch item (html or url, options, metadata) per line')
    .requiredOption('-o, --output <dir>', 'where the files go (their filename option, or the line number: 000123.pdf, a picture 000124.png), with manifest.jsonl')
    .option('--archive', 'have the service make one ZIP of all PDFs, and download that (archive.zip) instead of each PDF')
    .option('--skip-invalid', 'run the valid lines and report the invalid ones as failures (else nothing runs when a line is invalid)')
    .option('--webhook-url <url>', 'POST the job here when it ends, signed with your key’s webhook secret')
    .option('--progress', 'show a progress bar (the default on a terminal)')
    .option('--no-progress', 'no progress bar')
    .option('--json', 'print the outcome as JSON');
  kit.withDocumentFlags(command);
  command.addHelpText('after', '\nDocument flags apply to every line, under the line’s own options.');
  return command.action(async (file: string, flags: BulkFlags, self: Command) => run(kit, file, flags, self));
}

async function run(kit: BulkKit, file: string, flags: BulkFlags, command: Command): Promise<void> {
  const api = kit.client(command);
  const { baseUrl } = command.optsWithGlobals<{ baseUrl: string }>();
  const options = kit.documentOptions(command);
  const inputSize = await stat(file).then(
    (info) => (info.isFile() ? info.size : undefined),
    () => undefined,
  );
  if (inputSize === undefined) throw kit.usageError(`cannot read ${file}: not a file; nothing was sent`);
  const dir = flags.output;
  await mkdir(dir, { recursive: true });
  try {
    await access(dir, constants.W_OK);
  } catch (error) {
    throw kit.usageError(`cannot write into ${dir}: ${(error as NodeJS.ErrnoException).code}; nothing was sent`);
  }

  const request = {
    options,
    archive: flags.archive === true,
    skip_invalid: flags.skipInvalid === true,
    ...(flags.webhookUrl !== undefined && { webhook_url: flags.webhookUrl }),
  };
  const hash = await jobHash(file, { ...request, base_url: baseUrl });
  const state = await readState(dir);
  const say = (text: string) => {
    if (!flags.json) console.error(terminalText(text));
  };
  let jobId: string;
  if (state) {
    if (state.input_sha256 !== hash) {
      throw kit.usageError(
        `${dir} holds the output of another bulk job (${state.job_id}, from other input or flags): give another -o directory, or delete ${join(dir, STATE_FILE)} to start a new job there; nothing was sent`,
      );
    }
    jobId = state.job_id;
    say(`resuming ${jobId} (from ${join(dir, STATE_FILE)})`);
  } else {
    say(`uploading ${file}`);
    const accepted = await api.bulk({ file, ...request });
    jobId = accepted.job_id;
    // At once: from here on, running the command again follows this job rather than paying for another.
    await writeState(dir, { job_id: jobId, input_sha256: hash, base_url: baseUrl, submitted_at: new Date().toISOString() });
    say(`${jobId} accepted: ${accepted.total} lines`);
  }

  const showProgress = flags.progress ?? process.stderr.isTTY;
  const bar = kit.progressBar('bulk', showProgress);
  let barStarted = false;
  let job: BulkJob;
  let result: BulkResult;
  try {
    job = await followJob(api, jobId, ({ status, total, succeeded = 0, failed = 0 }) => {
      if (!showProgress || total === undefined) return;
      if (!barStarted) bar.start(total, succeeded + failed, { stage: status });
      barStarted = true;
      bar.update(succeeded + failed, { stage: `${status}${failed ? `, ${failed} failed` : ''}` });
    });
    if ((job.status as string) === 'failed' && !(job.result && 'manifest_url' in (job.result as object))) throw jobFailure(job);
    result = job.result as unknown as BulkResult;

    // The manifest first (whole, to a file of its own), then what it lists.
    await saveResponse(await api.jobFile(jobId, 'manifest'), join(dir, MANIFEST_FILE));
    if (flags.archive) {
      const archive = join(dir, ARCHIVE_FILE);
      if (!(await exists(archive))) {
        if (barStarted) bar.update({ stage: 'downloading archive.zip' });
        await saveResponse(await api.jobFile(jobId, 'archive'), archive);
      }
    }
  } finally {
    if (barStarted && flags.archive) bar.stop();
  }

  const failures: { line: number; code: string; message: string }[] = [];
  let saved = 0;
  let present = 0;
  let failed = 0;
  if (!flags.archive) {
    const names = new Names(job.total ?? 0);
    if (showProgress) {
      if (barStarted) bar.stop();
      bar.start(result.succeeded, 0, { stage: 'downloading' });
      barStarted = true;
    }
    const manifest = readManifest(join(dir, MANIFEST_FILE));
    const input = inputLines(file);
    async function* downloads() {
      for await (const entry of manifest) {
        const text = (await input.next()).value as string | undefined;
        const name = names.next(entry.line, text === undefined ? undefined : filenameOf(text, options), manifestExtension(entry));
        if (!entry.success) {
          failed += 1;
          if (failures.length < FAILURES_SHOWN) failures.push({ line: entry.line, code: entry.error.code, message: entry.error.message });
          continue;
        }
        yield { entry, path: join(dir, name) };
      }
    }
    try {
      await eachLimited(downloads(), DOWNLOADS_AT_ONCE, async ({ entry, path }) => {
        const existing = await stat(path).catch(() => undefined);
        if (existing?.size === entry.size_bytes) present += 1;
        else {
          await downloadTo(entry.download_url, path);
          saved += 1;
        }
        if (barStarted) bar.increment();
      });
    } finally {
      if (barStarted) bar.stop();
    }
  } else {
    for await (const entry of readManifest(join(dir, MANIFEST_FILE))) {
      if (entry.success) continue;
      failed += 1;
      if (failures.length < FAILURES_SHOWN) failures.push({ line: entry.line, code: entry.error.code, message: entry.error.message });
    }
  }

  const summary = {
    job_id: jobId,
    status: job.status,
    total: job.total,
    succeeded: result.succeeded,
    failed: result.failed,
    output: dir,
    ...(flags.archive ? { archive: join(dir, ARCHIVE_FILE) } : { downloaded: saved, already_present: present }),
    manifest: join(dir, MANIFEST_FILE),
    failures,
  };
  if (flags.json) console.log(terminalJson(summary));
  else {
    if (failures.length > 0) {
      kit.printTable([['LINE', 'ERROR', 'MESSAGE'], ...failures.map((failure) => [String(failure.line), failure.code, failure.message])]);
      if (failed > failures.length) console.log(`… and ${failed - failures.length} more: see ${join(dir, MANIFEST_FILE)}`);
    }
    const where = flags.archive ? `archived in ${join(dir, ARCHIVE_FILE)}` : `saved to ${dir}${present ? ` (${present} were already there)` : ''}`;
    const cancelled = (job.status as string) === 'cancelled' ? ' (the job was cancelled)' : '';
    console.log(terminalText(`${result.succeeded} of ${job.total} PDFs ${where}${result.failed ? `; ${result.failed} failed` : ''}${cancelled}`));
  }
  if (result.failed > 0 || (job.status as string) !== 'succeeded') process.exitCode = 1;
}

/** The saved manifest, line by line. */
async function* readManifest(path: string): AsyncGenerator<ManifestLine> {
  for await (const line of inputLines(path)) if (line.trim() !== '') yield JSON.parse(line) as ManifestLine;
}
