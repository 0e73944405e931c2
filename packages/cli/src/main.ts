#!/usr/bin/env node
/**
 * pdfapi: the PDF API from the command line (`npx pdfapi --help` in the checkout after `npm ci`).
 *
 * A thin shell over the typed client: the key comes from PDFAPI_KEY (or --api-key), the service from
 * PDFAPI_URL (or --base-url, default the local stack). Every document option is a flag, built from
 * the OpenAPI document's DocumentOptions, so a new option needs no change here. Errors print the
 * API's code and message and exit 1; a command line that makes no sense exits 2.
 */
import { constants, readFileSync } from 'node:fs';
import { access, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { Presets, SingleBar } from 'cli-progress';
// The client's source, not its package: the CLI's build bundles it (one file, no dependency to resolve at start).
import { createPdfApiClient, PdfApiConnectionError, PdfApiError, type BatchItem, type DocumentOptions, type Job, type PdfApiClient, type JobAccepted, type PdfRecord, type StoredRecord } from '../../client/src/index.ts';
import apiDocument from './document-options.json' with { type: 'json' };
import cliPackage from '../package.json' with { type: 'json' };
import { bulkCommand } from './bulk.ts';
import { JsonFlagError, parseJsonFlag } from './json-flags.ts';
import { API_BODY_LIMIT, entryKind, humanSize, readHtmlFile, readHtmlStdin, SourceError } from './sources.ts';
import { templateCommand } from './templates.ts';
import { extensionOf, safePdfFilename, terminalJson, terminalText } from './untrusted.ts';

const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';

/** A command line that cannot run as given: exit 2, like commander's own usage errors. */
class UsageError extends Error {}

/** A PDF made (and charged) that could not be saved: exit 1, its id and link in the message. */
class MadeNotSavedError extends Error {}

// ---------------------------------------------------------------------------------------------
// Document options as flags, from the OpenAPI document

interface JsonSchema {
  readonly type?: string;
  readonly enum?: readonly string[];
  readonly description?: string;
  readonly default?: unknown;
}

const OPTION_SCHEMAS: Record<string, JsonSchema> = apiDocument.properties;

/** The CLI's own flags; a document option by one of these names would be unreachable. */
const OWN_FLAGS = [
  ...['url', 'output', 'json', 'progress', 'merge', 'idempotency-key', 'api-key', 'base-url', 'limit', 'cursor', 'async', 'webhook-url', 'wait', 'archive', 'skip-invalid'],
  // The template commands' (templates.ts).
  ...['name', 'html', 'header', 'footer', 'schema', 'sample', 'options', 'data', 'version', 'from-version'],
];

/** `@path` reads the value from a file, as curl does: templates and JSON options are easier kept in files. */
function fromFileIfAt(value: string): string {
  if (!value.startsWith('@')) return value;
  try {
    // Sync on purpose: commander's argument parsers are synchronous.
    return readFileSync(value.slice(1), 'utf8');
  } catch (error) {
    throw new InvalidArgumentError(`cannot read ${value.slice(1)}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

/** commander's InvalidArgumentError for a JSON flag's error, which already names the flag. */
function jsonFlagParser(flag: string, parse: (raw: string) => unknown): (raw: string) => unknown {
  return (raw) => {
    try {
      return parse(raw);
    } catch (error) {
      if (error instanceof JsonFlagError) throw new InvalidArgumentError(error.message);
      throw error;
    }
  };
}

/** How a flag's text becomes the option's JSON value; the API validates it and explains a bad one. */
function parserFor(schema: JsonSchema, flag: string): (raw: string) => unknown {
  switch (schema.type) {
    case 'number':
    case 'integer':
      // Not a number: sent as given, so the API's message names the option and the range.
      return (raw) => (raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw);
    case 'string':
      return fromFileIfAt;
    case 'object':
    case 'array':
      // Inline JSON, a path, or @path.
      return jsonFlagParser(flag, (raw) => parseJsonFlag(raw, flag));
    default:
      // Either-or options (margin: a length or an object): JSON inline, from @path or a .json file; else the text itself.
      return jsonFlagParser(flag, (raw) => (/^\s*[[{]/.test(raw) || raw.startsWith('@') || /\.json$/i.test(raw) ? parseJsonFlag(raw, flag) : raw));
  }
}

function summary(schema: JsonSchema): string {
  const first = (schema.description ?? '').split(/(?<=\.)\s/)[0] ?? '';
  const values = schema.enum ? ` (${schema.enum.join('|')})` : '';
  const byDefault = schema.default === undefined ? '' : ` [default: ${JSON.stringify(schema.default)}]`;
  return `${first}${values}${byDefault}`;
}

interface DocumentFlag {
  readonly name: string;
  readonly options: readonly Option[];
}

/** One flag per option (`print_background` → `--print-background` and `--no-print-background`). */
function documentFlags(): readonly DocumentFlag[] {
  return Object.entries(OPTION_SCHEMAS).map(([name, schema]) => {
    const flag = name.replaceAll('_', '-');
    if (OWN_FLAGS.includes(flag)) throw new Error(`document option ${name} collides with a pdfapi flag`);
    if (schema.type === 'boolean') {
      // Both spellings are accepted; help shows the one that changes the default.
      const on = new Option(`--${flag}`, `${summary({ ...schema, default: undefined })} [default: off]`);
      const off = new Option(`--no-${flag}`, `turn off: ${summary({ ...schema, default: undefined })} [default: on]`);
      (schema.default === true ? on : off).hideHelp();
      return { name, options: [on, off] };
    }
    const placeholder = schema.type === 'number' || schema.type === 'integer' ? 'n' : schema.type === 'string' ? 'value' : schema.type === 'object' || schema.type === 'array' ? 'json|file' : 'value|json';
    const how = placeholder.includes('json') ? ' JSON inline, a file or @file.' : '';
    // An object whose fields all have defaults may be given bare (`--thumbnail`): it is sent as {}.
    const bare = schema.type === 'object' && !(schema as { required?: unknown[] }).required?.length;
    const argument = bare ? `[${placeholder}]` : `<${placeholder}>`;
    return { name, options: [new Option(`--${flag} ${argument}`, `${summary(schema)}${how}${bare ? ' Alone: every field’s default.' : ''}`).argParser(parserFor(schema, `--${flag}`))] };
  });
}

const DOCUMENT_FLAGS = documentFlags();

function withDocumentFlags(command: Command): Command {
  for (const { options } of DOCUMENT_FLAGS) for (const option of options) command.addOption(option);
  return command;
}

/** The document options the command line gave, in the API's names; absent flags are left to the API's defaults. */
function documentOptions(command: Command): DocumentOptions {
  const values = command.opts();
  const options: DocumentOptions = {};
  // Each value as its flag's parser made it from the option's schema; the API checks it and names what it refuses.
  for (const { name, options: [option] } of DOCUMENT_FLAGS) {
    const value: unknown = values[option!.attributeName()];
    // A bare object flag (commander's `true` for an optional argument left out): every default.
    if (value !== undefined) Object.assign(options, { [name]: value === true && OPTION_SCHEMAS[name]?.type === 'object' ? {} : value });
  }
  return options;
}

// ---------------------------------------------------------------------------------------------
// Output

/** A table on stdout; every cell goes through terminalText, since most come from the server. */
function printTable(table: readonly (readonly string[])[]): void {
  const rows = table.map((row) => row.map((cell) => terminalText(cell)));
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  for (const row of rows) console.log(row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '));
}

/** What a record is, in a few words: a PDF's pages, a picture's pixels. */
function recordShape(record: StoredRecord): string {
  return 'pages' in record ? `${record.pages} ${record.pages === 1 ? 'page' : 'pages'}` : `${record.width} x ${record.height} ${record.content_type}`;
}

function printRecord(record: StoredRecord): void {
  printTable([
    ['id', record.id],
    ...('pages' in record ? [['pages', String(record.pages)], ['format', record.format]] : [['picture', recordShape(record)]]),
    ['size', `${humanSize(record.size)} (${record.size} bytes)`],
    ...('thumbnail_url' in record && record.thumbnail_url !== undefined ? [['thumbnail', record.thumbnail_url]] : []),
    ['filename', record.filename],
    ['generated in', `${record.generation_time_ms} ms`],
    ['created', record.created_at],
    ['expires', record.expires_at],
    ['url', record.url],
  ]);
}

function printJson(value: unknown): void {
  console.log(terminalJson(value));
}

// ---------------------------------------------------------------------------------------------
// Commands

function client(command: Command, { keyed = true } = {}): PdfApiClient {
  const { apiKey, baseUrl } = command.optsWithGlobals<{ apiKey?: string; baseUrl: string }>();
  if (keyed && !apiKey) throw new UsageError('no API key: set PDFAPI_KEY or pass --api-key (npm run keys -- create makes one)');
  return createPdfApiClient({ baseUrl, apiKey });
}

/** A file's HTML, decoded by its BOM or declared charset; a file that cannot be sent is an error naming it. */
async function readSource(file: string): Promise<string> {
  try {
    return (file === '-' ? await readHtmlStdin() : await readHtmlFile(file)).html;
  } catch (error) {
    if (error instanceof SourceError) throw new Error(`${file === '-' ? 'standard input' : file}: ${error.message}`);
    throw error;
  }
}

/**
 * Before anything is charged: can `output` be written? Its directory must exist and be writable,
 * and it must not be a directory itself. A usage error (exit 2) when not.
 */
async function checkOutputFile(output: string): Promise<void> {
  if (output === '-') return;
  const existing = await stat(output).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new UsageError(`cannot write ${output}: ${error.code ?? error.message}; nothing was sent`);
  });
  if (existing?.isDirectory()) throw new UsageError(`cannot write ${output}: it is a directory (give a file name); nothing was sent`);
  const directory = dirname(resolve(output));
  const target = existing ? output : directory;
  try {
    await access(target, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? `${directory} does not exist` : code === 'EACCES' || code === 'EPERM' ? `${target} is not writable` : code;
    throw new UsageError(`cannot write ${output}: ${why}; nothing was sent`);
  }
}

/** Why a file could not be saved, in a word. */
function saveFailure(error: unknown): string {
  if (error instanceof PdfApiError) return `${error.code}: ${error.message}`;
  return (error as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error));
}

/** What to say when a PDF was made but not saved: nothing paid for is lost while its id and link are known. */
function madeNotSaved(record: { id: string; url: string; expires_at?: string }, output: string, error: unknown): string {
  const until = record.expires_at ? ` (until ${record.expires_at})` : '';
  return `cannot save ${output}: ${saveFailure(error)}. The PDF was made and charged: ${record.id}, at ${record.url}${until}; pdfapi download ${record.id} -o <file> fetches it again`;
}

/** Writes the PDF to a file, or to stdout for `-`. */
async function save(bytes: Uint8Array, output: string): Promise<void> {
  if (output === '-') {
    await new Promise<void>((resolve, reject) => process.stdout.write(bytes, (error) => (error ? reject(error) : resolve())));
    return;
  }
  await writeFile(output, bytes);
}

interface GenerateFlags {
  url?: string;
  output?: string;
  json?: boolean;
  idempotencyKey?: string;
  async?: boolean;
  webhookUrl?: string;
  wait?: boolean;
}

/** A finished job's record (a PDF's or a picture's), or its error as the synchronous call would have thrown it. */
function jobRecord(job: Job): StoredRecord {
  const result = job.result;
  if (job.status === 'succeeded' && result && 'id' in result) return result;
  const error = result && 'error' in result ? result.error : { code: 'job_failed', message: `job ${job.job_id} failed` };
  throw new PdfApiError(0, String(error.code), String(error.message));
}

/** A Markdown file, by its name: sent as `markdown` rather than `html`. */
const MARKDOWN_FILE = /\.(md|markdown)$/i;

/** `pdfapi generate` (a PDF) and `pdfapi image` (a picture): the same sources, flags and waiting. */
const generate = (output: 'pdf' | 'image') => (file: string | undefined, flags: GenerateFlags, command: Command) => make(output, file, flags, command);

async function make(output: 'pdf' | 'image', file: string | undefined, flags: GenerateFlags, command: Command): Promise<void> {
  if (file !== undefined && flags.url !== undefined) throw new UsageError('give an HTML or Markdown file or --url, not both');
  if ((flags.webhookUrl !== undefined || flags.wait) && !flags.async) throw new UsageError('--webhook-url and --wait go with --async');
  let source: { html: string } | { url: string } | { markdown: string };
  if (flags.url !== undefined) source = { url: flags.url };
  else if (file !== undefined && MARKDOWN_FILE.test(file)) source = { markdown: await readSource(file) };
  else if (file !== undefined) source = { html: await readSource(file) };
  else if (!process.stdin.isTTY) source = { html: await readSource('-') };
  else throw new UsageError('give an HTML file, - to read standard input, or --url');
  // Nothing is charged for a PDF that has nowhere to go.
  if (flags.output !== undefined && (!flags.async || flags.wait)) await checkOutputFile(flags.output);

  const api = client(command);
  const request = { ...source, ...documentOptions(command) };
  const submit = (body: typeof request & { async?: true; webhook_url?: string }) =>
    output === 'image' ? api.image(body as Parameters<typeof api.image>[0], { idempotencyKey: flags.idempotencyKey }) : api.generate(body as Parameters<typeof api.generate>[0], { idempotencyKey: flags.idempotencyKey });
  let record: StoredRecord;
  if (flags.async) {
    const accepted = (await submit({ ...request, async: true, ...(flags.webhookUrl !== undefined && { webhook_url: flags.webhookUrl }) })) as JobAccepted;
    if (!flags.wait) {
      if (flags.json) printJson(accepted);
      else console.log(terminalText(`${accepted.job_id} queued: pdfapi job ${accepted.job_id} --wait${flags.output !== undefined ? ` -o ${flags.output}` : ''}`));
      return;
    }
    record = jobRecord(await api.waitForJob(accepted.job_id));
  } else {
    record = (await submit(request)) as unknown as StoredRecord;
  }
  let notSaved: string | undefined;
  if (flags.output !== undefined) {
    try {
      await save(await api.download(record), flags.output);
    } catch (error) {
      notSaved = madeNotSaved(record, flags.output, error);
    }
  }
  // With the PDF on stdout, the record goes to stderr so a pipe gets the file alone.
  const log = flags.output === '-' ? console.error : console.log;
  if (flags.json) log(terminalJson(record));
  else if (flags.output === '-') log(terminalText(`${record.id}: ${recordShape(record)}, ${humanSize(record.size)}`));
  else {
    printRecord(record);
    if (flags.output !== undefined && notSaved === undefined) console.log(`saved ${flags.output}`);
  }
  if (notSaved !== undefined) throw new MadeNotSavedError(notSaved);
}

/** A file's outcome, in the API's words (`success`, `pdf_id`, `pages`, `size_bytes`, `error`) with the file and where it was saved. */
interface BatchFileResult {
  readonly file: string;
  readonly success: boolean;
  readonly output?: string;
  readonly pdf_id?: string;
  readonly pages?: number;
  readonly size_bytes?: number;
  readonly error?: { readonly code: string; readonly message: string };
}

const RETRIES_WHEN_BUSY = 3;

/** A batch request, retried after the wait the API asks for when rate-limited or busy. */
async function batchWithRetry(api: PdfApiClient, pdfs: BatchItem[], merge: boolean, onWait: (seconds: number) => void) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await api.batch({ pdfs, merge });
    } catch (error) {
      const wait = error instanceof PdfApiError ? Number(error.details.retry_after) : Number.NaN;
      const retryable = error instanceof PdfApiError && (error.code === 'rate_limit_exceeded' || error.code === 'service_busy');
      if (!retryable || !Number.isFinite(wait) || attempt === RETRIES_WHEN_BUSY) throw error;
      onWait(wait);
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    }
  }
}

/** Runs `work` over `items` with at most `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const DOWNLOADS_AT_ONCE = 8;
/** The API refuses a body over 5 MB (413 payload_too_large); requests stay under it with room for the envelope. */
const REQUEST_BODY_BUDGET = API_BODY_LIMIT - 64 * 1024;
/** The name --merge saves the joined PDF under, in the output directory. */
const MERGED_NAME = 'merged.pdf';

/** The PDF a source file is saved as: `<name>.pdf` for `<name>.html`. */
function outputName(file: string): string {
  return `${basename(file, extname(file))}.pdf`;
}

/** A file that cannot be sent, as its result: its own reason, never the whole batch's. */
function sourceFailure(file: string, error: unknown): BatchFileResult {
  if (error instanceof SourceError) return { file, success: false, error: { code: error.code, message: error.message } };
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return { file, success: false, error: { code: 'unreadable_file', message: `cannot read it: ${code ?? (error instanceof Error ? error.message : String(error))}` } };
}

/**
 * Before anything is sent: two files saved under one name would overwrite each other (`report.html`
 * and `report.htm`; `Report.html` and `report.html` on a filesystem that ignores case; an item
 * called merged.html with --merge). A usage error naming them; names compare ignoring case and
 * Unicode normalisation, as macOS and Windows do.
 */
function refuseCollisions(names: readonly string[], merge: boolean): void {
  const key = (name: string) => name.normalize('NFC').toLowerCase();
  const byOutput = new Map<string, string[]>();
  for (const name of names) byOutput.set(key(outputName(name)), [...(byOutput.get(key(outputName(name))) ?? []), name]);
  const problems: string[] = [];
  for (const files of byOutput.values()) {
    if (merge && key(outputName(files[0]!)) === MERGED_NAME) problems.push(`${files.join(', ')} would be saved as ${MERGED_NAME}, the name --merge saves the joined PDF under`);
    else if (files.length > 1) problems.push(`${files.join(', ')} would ${files.length === 2 ? 'both' : 'all'} be saved as ${outputName(files[0]!)}`);
  }
  if (problems.length > 0) throw new UsageError(`${problems.join('; ')}: rename them (names are compared ignoring case); nothing was sent`);
}

/**
 * The batch requests for a directory's files, in order: each as large as the key may send and
 * under the body limit, files read only as their request is built (a large directory is never
 * held in memory at once). A file too large on its own goes alone, for the API to refuse; one that
 * could never be sent, or cannot be read or decoded, is answered here as a failure of its own.
 */
async function* batchRequests(
  dir: string,
  names: readonly string[],
  size: number,
  options: DocumentOptions,
): AsyncGenerator<{ files: string[]; pdfs: BatchItem[] } | { failed: BatchFileResult }> {
  let files: string[] = [];
  let pdfs: BatchItem[] = [];
  let bytes = 0;
  for (const name of names) {
    let item: BatchItem;
    let itemBytes: number;
    try {
      item = {
        html: (await readHtmlFile(join(dir, name))).html,
        // Each PDF downloads under its source's name unless --filename says otherwise.
        options: { filename: outputName(name), ...options },
        metadata: { filename: name },
      };
      itemBytes = Buffer.byteLength(JSON.stringify(item)) + 1;
    } catch (error) {
      yield { failed: sourceFailure(name, error) };
      continue;
    }
    if (pdfs.length > 0 && (pdfs.length === size || bytes + itemBytes > REQUEST_BODY_BUDGET)) {
      yield { files, pdfs };
      [files, pdfs, bytes] = [[], [], 0];
    }
    files.push(name);
    pdfs.push(item);
    bytes += itemBytes;
  }
  if (pdfs.length > 0) yield { files, pdfs };
}

/** The progress bar of batch and bulk, on standard error; drawn on a terminal, or every second elsewhere when asked for (--progress). */
function progressBar(name: string, show: boolean): SingleBar {
  return new SingleBar(
    { format: `pdfapi ${name} {bar} {value}/{total} PDFs | {stage} | {duration_formatted}`, hideCursor: true, noTTYOutput: show, stream: process.stderr, notTTYSchedule: 1000 },
    Presets.shades_classic,
  );
}

async function batch(dir: string, flags: { output: string; merge?: boolean; json?: boolean; progress?: boolean }, command: Command): Promise<void> {
  const candidates = (await readdir(dir, { withFileTypes: true })).filter((entry) => /\.html?$/i.test(entry.name));
  const byName = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });
  const names = candidates
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name)
    .sort(byName);
  // Links are not followed (a link could send a file from anywhere to the service), nor anything
  // else that is not a regular file: each is named on stderr, and in --json's `skipped`.
  const skipped = candidates
    .filter((entry) => !entry.isFile())
    .map((entry) => ({ file: entry.name, reason: entryKind(entry) }))
    .sort((a, b) => byName(a.file, b.file));
  for (const { file, reason } of skipped) console.error(`skipped ${terminalText(file)}: ${reason}`);
  if (names.length === 0) throw new UsageError(`no .html files in ${dir}${skipped.length > 0 ? ` (${skipped.length} skipped)` : ''}`);
  refuseCollisions(names, flags.merge === true);

  const api = client(command);
  const { max_batch_size: size } = await api.usage();
  if (flags.merge && names.length > size) throw new UsageError(`--merge joins one batch: at most ${size} files for this key, ${dir} has ${names.length}`);
  await mkdir(flags.output, { recursive: true });
  try {
    await access(flags.output, constants.W_OK);
  } catch (error) {
    throw new UsageError(`cannot write into ${flags.output}: ${(error as NodeJS.ErrnoException).code}; nothing was sent`);
  }

  const options = documentOptions(command);
  const showProgress = flags.progress ?? process.stderr.isTTY;
  const bar = progressBar('batch', showProgress);
  if (showProgress) bar.start(names.length, 0, { stage: 'rendering' });
  const byFile = new Map<string, BatchFileResult>();
  let merged: PdfRecord | null | undefined;
  try {
    for await (const request of batchRequests(dir, names, size, options)) {
      if ('failed' in request) {
        byFile.set(request.failed.file, request.failed);
        bar.increment();
        continue;
      }
      const { files, pdfs } = request;
      const done = byFile.size;
      bar.update({ stage: `rendering ${done + 1}-${done + files.length}` });
      let answer;
      try {
        answer = await batchWithRetry(api, pdfs, flags.merge === true, (seconds) => bar.update({ stage: `waiting ${seconds}s (busy)` }));
      } catch (error) {
        if (!(error instanceof PdfApiError)) throw error;
        const failure = { success: false, error: { code: error.code, message: error.message } } as const;
        // Too large or refused for its content: this request only. Anything else (quota, key,
        // overload that outlasted the retries) would refuse the rest too: they are not sent.
        const thisRequestOnly = error.code === 'payload_too_large' || error.code === 'invalid_request';
        for (const file of thisRequestOnly ? files : names.filter((name) => !byFile.has(name))) byFile.set(file, { file, ...failure });
        bar.update(byFile.size);
        if (thisRequestOnly) continue;
        break;
      }
      merged = answer.merged;
      bar.update({ stage: 'downloading' });
      await eachLimited([...answer.results.keys()], DOWNLOADS_AT_ONCE, async (index) => {
        const file = files[index]!;
        const result = answer.results[index]!;
        if (result.success) {
          const output = join(flags.output, outputName(file));
          try {
            await writeFile(output, await api.download(result.download_url));
            byFile.set(file, { file, success: true, output, pdf_id: result.pdf_id, pages: result.pages, size_bytes: result.size_bytes });
          } catch (error) {
            const code = error instanceof PdfApiError ? error.code : 'download_failed';
            byFile.set(file, { file, success: false, pdf_id: result.pdf_id, error: { code, message: `made but not saved (${result.pdf_id}, ${result.download_url}): ${saveFailure(error)}` } });
          }
        } else {
          byFile.set(file, { file, success: false, error: result.error });
        }
        bar.increment();
      });
    }
    bar.update({ stage: 'done' });
  } finally {
    bar.stop();
  }
  const results = names.flatMap((name) => byFile.get(name) ?? []);
  const mergedOutput = join(flags.output, MERGED_NAME);
  let mergedNotSaved: string | undefined;
  if (merged) {
    try {
      await writeFile(mergedOutput, await api.download(merged));
    } catch (error) {
      mergedNotSaved = madeNotSaved(merged, mergedOutput, error);
    }
  }

  const failed = results.filter((result) => !result.success).length;
  // The batch response's own shape (success, total, successful, failed), over every request the directory took.
  if (flags.json) {
    printJson({
      success: failed === 0 && mergedNotSaved === undefined,
      total: results.length,
      successful: results.length - failed,
      failed,
      results,
      merged: merged ?? null,
      skipped,
      ...(mergedNotSaved !== undefined && { merged_error: mergedNotSaved }),
    });
  }
  else {
    printTable([
      ['FILE', 'RESULT', 'PAGES', 'SIZE', 'PDF / ERROR'],
      ...results.map((result) =>
        result.success
          ? [result.file, 'ok', String(result.pages), humanSize(result.size_bytes!), `${result.output} (${result.pdf_id})`]
          : [result.file, result.error!.code, '', '', result.error!.message],
      ),
    ]);
    const joined = merged && mergedNotSaved === undefined ? `, joined in ${mergedOutput}` : '';
    console.log(`${results.length - failed} of ${results.length} saved to ${flags.output}${joined}${failed ? `; ${failed} failed` : ''}${skipped.length ? `; ${skipped.length} skipped` : ''}`);
  }
  if (mergedNotSaved !== undefined) console.error(terminalText(`error: ${mergedNotSaved}`));
  if (failed > 0 || mergedNotSaved !== undefined) process.exitCode = 1;
}

async function usage(flags: { json?: boolean }, command: Command): Promise<void> {
  const usage = await client(command).usage();
  if (flags.json) return printJson(usage);
  printTable([
    ['tier', usage.tier],
    ['PDFs this month', `${usage.quota_used} of ${usage.monthly_quota} (${usage.quota_remaining} left, resets ${usage.quota_reset_at})`],
    ['rate limit', `${usage.rate_limit_per_minute} requests per minute`],
    ['batch size', `at most ${usage.max_batch_size} PDFs`],
    ['links valid', `${usage.link_validity_days} days`],
  ]);
}

async function list(flags: { limit?: number; cursor?: string; json?: boolean }, command: Command): Promise<void> {
  const page = await client(command).list({ limit: flags.limit, cursor: flags.cursor });
  if (flags.json) return printJson(page);
  if (page.data.length === 0) console.log('no PDFs');
  else printTable([['ID', 'CREATED', 'PAGES', 'SIZE', 'EXPIRES', 'FILENAME'], ...page.data.map((pdf) => [pdf.id, pdf.created_at, 'pages' in pdf ? String(pdf.pages) : `${pdf.width}x${pdf.height}`, humanSize(pdf.size), pdf.expires_at, pdf.filename])]);
  if (page.next_cursor) console.log(terminalText(`more: pdfapi list --cursor ${page.next_cursor}`));
}

async function get(id: string, flags: { json?: boolean }, command: Command): Promise<void> {
  const record = await client(command).get(id);
  if (flags.json) printJson(record);
  else printRecord(record);
}

async function download(id: string, flags: { output?: string }, command: Command): Promise<void> {
  const api = client(command);
  const record = await api.get(id);
  // A name from the network never picks a directory, a dotfile, standard output or a name the
  // filesystem or the terminal would take for something else: safePdfFilename makes one of it.
  const named = flags.output === undefined ? safePdfFilename(record.filename, record.id, extensionOf(record.content_type)) : undefined;
  const output = flags.output ?? named!;
  await save(await api.download(record), output);
  if (output === '-') return;
  const renamed = named !== undefined && named !== record.filename ? ` (the server named it ${JSON.stringify(record.filename)}, not a safe file name here)` : '';
  console.log(terminalText(`saved ${output}${renamed}`));
}

async function job(id: string, flags: { wait?: boolean; output?: string; json?: boolean }, command: Command): Promise<void> {
  const api = client(command);
  const current = flags.wait ? await api.waitForJob(id) : await api.job(id);
  if (flags.json) printJson(current);
  else console.log(terminalText(`${current.job_id}: ${current.status}${current.completed_at ? ` at ${current.completed_at}` : ''}`));
  if (current.status === 'failed') {
    // The job's error, as the synchronous call would have answered it.
    jobRecord(current);
  }
  if (flags.output === undefined || current.status !== 'succeeded') return;
  const result = current.result;
  if (result && 'id' in result) {
    await save(await api.download(result), flags.output);
    if (flags.output !== '-') console.log(`saved ${flags.output}`);
    return;
  }
  if (!result || !('results' in result)) throw new UsageError(`${current.job_id} is a bulk job: pdfapi bulk <file> -o <dir> downloads its PDFs`);
  // A batch job: its PDFs in input order, into the directory.
  await mkdir(flags.output, { recursive: true });
  for (const [index, item] of result.results.entries()) {
    if (item.success && item.download_url) await writeFile(join(flags.output, `${index + 1}.pdf`), await api.download(item.download_url));
  }
  console.log(`saved ${result.results.filter((item) => item.success).length} PDFs to ${flags.output}`);
}

async function remove(ids: string[], _flags: unknown, command: Command): Promise<void> {
  const api = client(command);
  for (const id of ids) {
    await api.delete(id);
    console.log(`deleted ${id}`);
  }
}

function program(): Command {
  const positiveInt = (raw: string): number => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new InvalidArgumentError('a whole number from 1');
    return value;
  };
  const root = new Command('pdfapi')
    .description(`HTML to PDF with the PDF API (${apiDocument.info.title} ${apiDocument.info.version}).`)
    .version(cliPackage.version)
    .addOption(new Option('--api-key <key>', 'your API key').env('PDFAPI_KEY'))
    .addOption(new Option('--base-url <url>', 'where the API is').env('PDFAPI_URL').default(DEFAULT_BASE_URL))
    .showHelpAfterError('(pdfapi --help for usage)')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) })
    // pdfapi's own options are read before the command only, so a command may have a --version of
    // its own (`pdfapi template render tpl_… --version 2`); --api-key and --base-url are given to
    // every command below (the end of this function), so they still work after it too.
    .enablePositionalOptions();

  withDocumentFlags(
    root
      .command('generate')
      .description('Generate one PDF from an HTML file, standard input (- or a pipe) or --url. A value @path is read from the file.')
      .argument('[file]', 'the HTML file; - for standard input')
      .option('--url <url>', 'print this public URL instead')
      .option('-o, --output <file>', 'download the PDF to this file (- for standard output)')
      .option('--json', 'print the PDF record as JSON')
      .option('--idempotency-key <key>', 'safe to run again: the same key and request within 24 hours answer the first PDF, charged once')
      .option('--async', 'as a job (up to 15 minutes): print its id, or wait for it with --wait')
      .option('--webhook-url <url>', 'with --async: POST the job here when it ends, signed with your key’s webhook secret')
      .option('--wait', 'with --async: wait for the job, then act as without --async'),
  ).action(generate('pdf'));

  withDocumentFlags(
    root
      .command('image')
      .description('Take a picture (PNG, JPEG or WebP: --image \'{"format":"webp","width":1200}\') of an HTML or Markdown file, standard input or --url. A value @path is read from the file.')
      .argument('[file]', 'the HTML file (a .md file is sent as Markdown); - for standard input')
      .option('--url <url>', 'picture this public URL instead')
      .option('-o, --output <file>', 'download the picture to this file (- for standard output)')
      .option('--json', 'print the image record as JSON')
      .option('--idempotency-key <key>', 'safe to run again: the same key and request within 24 hours answer the first picture, charged once')
      .option('--async', 'as a job (up to 15 minutes): print its id, or wait for it with --wait')
      .option('--webhook-url <url>', 'with --async: POST the job here when it ends, signed with your key’s webhook secret')
      .option('--wait', 'with --async: wait for the job, then act as without --async'),
  ).action(generate('image'));

  withDocumentFlags(
    root
      .command('batch')
      .description('Generate a PDF from every .html file in a directory, in batches as large as your key allows, and download them.')
      .argument('<dir>', 'the directory of .html files')
      .requiredOption('-o, --output <dir>', 'where the PDFs go (<name>.pdf for <name>.html)')
      .option('--merge', 'also join them, in order, into merged.pdf')
      .option('--progress', 'show a progress bar (the default on a terminal)')
      .option('--no-progress', 'no progress bar')
      .option('--json', 'print the results as JSON'),
  ).action(batch);

  root.addCommand(
    bulkCommand({
      client: (command) => client(command),
      usageError: (message) => new UsageError(message),
      withDocumentFlags,
      documentOptions,
      progressBar,
      printTable,
    }),
  );

  root.command('usage').description('Your limits and this month’s usage.').option('--json', 'print as JSON').action(usage);
  root
    .command('list')
    .description('Your PDFs that can still be downloaded, newest first.')
    .option('--limit <n>', 'how many', positiveInt)
    .option('--cursor <cursor>', 'the next page, as the previous page said')
    .option('--json', 'print as JSON')
    .action(list);
  root.command('get').description('One PDF’s record.').argument('<id>', 'pdf_…').option('--json', 'print as JSON').action(get);
  root.command('download').description('Download a PDF you made.').argument('<id>', 'pdf_…').option('-o, --output <file>', 'where to (default: its filename; - for standard output)').action(download);
  root
    .command('job')
    .description('An asynchronous job’s state; with --wait, once it ended; with -o, its PDF (a file, or a directory for a batch).')
    .argument('<id>', 'job_…')
    .option('--wait', 'wait until it succeeded or failed')
    .option('-o, --output <path>', 'download its PDF here (a batch: into this directory)')
    .option('--json', 'print as JSON')
    .action(job);
  root.command('delete').description('Delete PDFs: their files and links stop working.').argument('<id...>', 'pdf_…').action(remove);
  templateCommand(root, {
    client: (command) => client(command),
    usageError: (message) => new UsageError(message),
    withDocumentFlags,
    documentOptions,
    printTable,
    printJson,
    printRecord,
    checkOutputFile,
    save,
    readHtml: readSource,
    positiveInt,
    madeNotSaved: (record, output, error) => madeNotSaved(record, output, error),
  });
  // The key and the address after the command too (`pdfapi generate --api-key …`): given there,
  // they are set on the program itself, where client() reads them, over the environment's.
  const giveGlobalOptions = (parent: Command) => {
    for (const command of parent.commands) {
      for (const [flags, name] of [['--api-key <key>', 'apiKey'], ['--base-url <url>', 'baseUrl']] as const) {
        const option = new Option(flags).hideHelp();
        command.addOption(option).on(`option:${option.name()}`, (value: string) => root.setOptionValueWithSource(name, value, 'cli'));
      }
      giveGlobalOptions(command);
    }
  };
  giveGlobalOptions(root);
  return root;
}

/**
 * The API's message in the command line's words: a field the API names (`"skip_invalid": true`,
 * `webhook_url`, `options.print_background`) is the flag that sets it here.
 */
function inFlagTerms(message: string): string {
  const flag = (field: string) => `--${field.replaceAll('_', '-')}`;
  return message
    .replace(/\bsend "(skip_invalid|archive|merge|async)": ?true/g, (_, field: string) => `add ${flag(field)}`)
    .replace(/"(skip_invalid|archive|merge|async)": ?true/g, (_, field: string) => flag(field))
    .replace(/\boptions\.([a-z][a-z_]*)/g, (_, field: string) => flag(field))
    .replace(/\b(skip_invalid|webhook_url|idempotency_key|template_version)\b/g, (_, field: string) => (field === 'template_version' ? '--version' : flag(field)))
    .replace(new RegExp(`\\b(${Object.keys(OPTION_SCHEMAS).filter((name) => name.includes('_')).join('|')})\\b`, 'g'), (_, field: string) => flag(field));
}

/** What went wrong, in one line: the API's code and message, never a stack trace. */
function describe(error: unknown, baseUrl: string): string {
  if (error instanceof PdfApiError && !(error instanceof PdfApiConnectionError)) {
    const wait = error.details.retry_after;
    const support = error.status >= 500 && error.requestId ? ` (request ${error.requestId})` : '';
    return `error ${error.code}: ${inFlagTerms(error.message)}${typeof wait === 'number' ? ` (retry in ${wait} s)` : ''}${support}`;
  }
  // fetch's own failure (refused, unknown host, bad port): after the client's retries, or from a
  // download link fetched directly; its cause says which.
  if (error instanceof PdfApiConnectionError) return `error: ${error.message}`;
  const cause = (error as { cause?: NodeJS.ErrnoException } | undefined)?.cause;
  if (error instanceof TypeError && cause instanceof Error) return `error: cannot reach ${baseUrl}: ${cause.code ?? cause.message}`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const path = (error as NodeJS.ErrnoException | undefined)?.path;
  if (code && path) return `error: ${path}: ${code === 'ENOENT' ? 'no such file or directory' : code}`;
  return `error: ${error instanceof Error ? error.message : String(error)}`;
}

const cli = program();
try {
  await cli.parseAsync();
} catch (error) {
  if (error instanceof CommanderError) {
    // Commander has printed its message (or the help); a bad command line exits 2.
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    // Server text (an error's code and message) reaches the terminal only through terminalText.
    console.error(terminalText(error instanceof UsageError ? `error: ${error.message}` : describe(error, cli.opts<{ baseUrl: string }>().baseUrl)));
    process.exitCode = error instanceof UsageError ? 2 : 1;
  }
}
