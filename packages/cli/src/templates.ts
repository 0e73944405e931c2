/**
 * `pdfapi template …`: stored templates from the command line (shared/spec/beyond.md "Templates").
 *
 * A template is kept as files, one per field, so it can be edited and versioned like any source:
 * `--html template.html --header header.html --footer footer.html --schema schema.json --sample
 * data.json --options options.json`. `create` saves version 1; `update` saves the next version from
 * the latest with the files given replacing their fields (a version is always whole: the API's PUT
 * takes every field); `get -o dir/` writes a version back as those files. `render` makes a PDF from
 * a template and data through generate (stored, charged); `preview` answers the PDF itself (not
 * stored, not charged, rate-limited), for editing.
 *
 * The shared machinery (the key and client, document flags, output checks, tables) is main.ts's,
 * handed in as a CliKit so the two files do not import each other.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Command, Option } from 'commander';
import type { DocumentOptions, PdfApiClient, PdfRecord, Template, TemplateRequest, TemplateSummary } from '../../client/src/index.ts';
import { readJsonFlag } from './json-flags.ts';
import { terminalJson, terminalText } from './untrusted.ts';

/** A template's fields as the API takes them (create, and every update: a version is always whole). */
type TemplateFields = TemplateRequest;

export interface CliKit {
  /** The typed client, keyed by PDFAPI_KEY or --api-key (a usage error without a key). */
  client(command: Command): PdfApiClient;
  /** A command line that cannot run as given: exit 2. */
  usageError(message: string): Error;
  withDocumentFlags(command: Command): Command;
  documentOptions(command: Command): DocumentOptions;
  printTable(table: readonly (readonly string[])[]): void;
  printJson(value: unknown): void;
  printRecord(record: PdfRecord): void;
  /** Can `output` be written? A usage error before anything is sent when not. */
  checkOutputFile(output: string): Promise<void>;
  /** Writes the PDF to a file, or to standard output for `-`. */
  save(bytes: Uint8Array, output: string): Promise<void>;
  /** An HTML file decoded as a browser would (its BOM or declared charset, else UTF-8); `-` for standard input. */
  readHtml(file: string): Promise<string>;
  positiveInt(raw: string): number;
  /** What to say when a PDF was made and charged but not saved (its id and link). */
  madeNotSaved(record: PdfRecord, output: string, error: unknown): string;
}

interface TemplateFileFlags {
  name?: string;
  html?: string;
  header?: string;
  footer?: string;
  schema?: string;
  sample?: string;
  options?: string;
  json?: boolean;
}

/** The fields the flags give, read from their files; document flags join `--options` (flags win). */
async function fieldsFromFlags(flags: TemplateFileFlags, command: Command, kit: CliKit): Promise<Partial<TemplateFields>> {
  // Header and footer are the template's own fields, rendered with the data: --header-html and
  // --footer-html (the document flags) name them too.
  const { header_html: headerFlag, footer_html: footerFlag, ...documentFlags } = kit.documentOptions(command);
  if (headerFlag !== undefined && flags.header !== undefined) throw kit.usageError('give --header or --header-html, not both');
  if (footerFlag !== undefined && flags.footer !== undefined) throw kit.usageError('give --footer or --footer-html, not both');
  const fields: Partial<TemplateFields> = {};
  if (flags.name !== undefined) fields.name = flags.name;
  if (flags.html !== undefined) fields.html = await kit.readHtml(flags.html);
  if (flags.header !== undefined) fields.header_html = await kit.readHtml(flags.header);
  else if (typeof headerFlag === 'string') fields.header_html = headerFlag;
  if (flags.footer !== undefined) fields.footer_html = await kit.readHtml(flags.footer);
  else if (typeof footerFlag === 'string') fields.footer_html = footerFlag;
  if (flags.schema !== undefined) fields.data_schema = await readJsonFlag(flags.schema, '--schema', { object: true });
  if (flags.sample !== undefined) fields.sample_data = await readJsonFlag(flags.sample, '--sample', { object: true });
  const options: DocumentOptions = { ...(flags.options !== undefined && (await readJsonFlag(flags.options, '--options', { object: true }))), ...documentFlags };
  if (flags.options !== undefined || Object.keys(documentFlags).length > 0) fields.options = options;
  return fields;
}

/** A template's fields as the API takes them back (a view carries its id, version and dates too). */
function requestOf(template: Template): TemplateFields {
  const { name, html, header_html, footer_html, data_schema, sample_data } = template;
  // As saved: the API validated them when they were sent; a view types them loosely (any object).
  const options: DocumentOptions | undefined = template.options && { ...template.options };
  return {
    name,
    html,
    ...(header_html !== undefined && { header_html }),
    ...(footer_html !== undefined && { footer_html }),
    ...(options !== undefined && { options }),
    ...(isJsonSchema(data_schema) && { data_schema }),
    ...(sample_data !== undefined && { sample_data }),
  };
}

/** A JSON Schema as the API takes one: an object, or true or false. */
function isJsonSchema(value: unknown): value is boolean | Record<string, unknown> {
  return typeof value === 'boolean' || (typeof value === 'object' && value !== null && !Array.isArray(value));
}

function printTemplate(template: Template, kit: CliKit): void {
  const size = (text: string | undefined) => (text === undefined ? '(none)' : `${Buffer.byteLength(text)} bytes`);
  kit.printTable([
    ['template_id', template.template_id],
    ['name', template.name],
    ['version', `${template.version} (latest ${template.latest_version})`],
    ['created', template.created_at],
    ['this version', template.updated_at],
    ['html', size(template.html)],
    ['header_html', size(template.header_html)],
    ['footer_html', size(template.footer_html)],
    ['options', template.options === undefined ? '(none)' : JSON.stringify(template.options)],
    ['data_schema', template.data_schema === undefined ? '(none)' : 'yes'],
    ['sample_data', template.sample_data === undefined ? '(none)' : 'yes'],
  ]);
}

/** The files `get -o dir/` writes, named as the flags of create and update take them back. */
const TEMPLATE_FILES = [
  { field: 'html', file: 'template.html', flag: '--html' },
  { field: 'header_html', file: 'header.html', flag: '--header' },
  { field: 'footer_html', file: 'footer.html', flag: '--footer' },
  { field: 'data_schema', file: 'schema.json', flag: '--schema' },
  { field: 'sample_data', file: 'data.json', flag: '--sample' },
  { field: 'options', file: 'options.json', flag: '--options @' },
] as const;

async function writeTemplateFiles(template: Template, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const { field, file } of TEMPLATE_FILES) {
    const value = template[field];
    if (value === undefined) continue;
    await writeFile(join(dir, file), typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`);
    written.push(file);
  }
  return written;
}

/** The data to render with (--data: inline JSON, a file, @file, or - for standard input), or none. */
async function readData(value: string | undefined): Promise<Record<string, unknown> | undefined> {
  return value === undefined ? undefined : readJsonFlag(value, '--data', { object: true });
}

/** Adds `pdfapi template` and its subcommands to the program (made with .command, so they take its settings: exit codes, output). */
export function templateCommand(root: Command, kit: CliKit): void {
  const template = root.command('template').description('Stored templates: Liquid HTML filled with JSON data (create, list, get, update, delete, render, preview).');
  const fileFlags = (command: Command, { required }: { required: boolean }) =>
    command
      .addOption(required ? new Option('--name <name>', 'what the template is called').makeOptionMandatory() : new Option('--name <name>', 'a new name'))
      .addOption(required ? new Option('--html <file>', 'the document’s HTML, a Liquid template').makeOptionMandatory() : new Option('--html <file>', 'the document’s HTML, a Liquid template'))
      .option('--header <file>', 'the page header, a Liquid template ({{pageNumber}} and {{totalPages}} keep working)')
      .option('--footer <file>', 'the page footer, a Liquid template')
      .option('--schema <json|file>', 'the JSON Schema the data must match: inline JSON, a file or @file')
      .option('--sample <json|file>', 'sample data, a JSON object (inline, a file or @file): what preview renders without --data')
      .option('--options <json|file>', 'default document options, a JSON object (inline, a file or @file); the document flags below add to them')
      .option('--json', 'print the saved version as JSON');

  kit
    .withDocumentFlags(
      fileFlags(template.command('create').description('Save a new template from files (version 1).'), { required: true }),
    )
    .action(async (flags: TemplateFileFlags, command: Command) => {
      const fields = await fieldsFromFlags(flags, command, kit);
      const api = kit.client(command);
      if (fields.name === undefined || fields.html === undefined) throw kit.usageError('give --name and --html');
      const created = await api.templates.create({ ...fields, name: fields.name, html: fields.html });
      if (flags.json) kit.printJson(created);
      else console.log(terminalText(`created ${created.template_id} version ${created.version} (${created.name})`));
    });

  template
    .command('list')
    .description('Your templates, newest first.')
    .option('--limit <n>', 'how many', kit.positiveInt)
    .option('--cursor <cursor>', 'the next page, as the previous page said')
    .option('--json', 'print as JSON')
    .action(async (flags: { limit?: number; cursor?: string; json?: boolean }, command: Command) => {
      const api = kit.client(command);
      const page = await api.templates.list({ limit: flags.limit, cursor: flags.cursor });
      if (flags.json) return kit.printJson(page);
      if (page.data.length === 0) console.log('no templates');
      else kit.printTable([['ID', 'VERSION', 'UPDATED', 'NAME'], ...page.data.map((item: TemplateSummary) => [item.template_id, String(item.version), item.updated_at, item.name])]);
      if (page.next_cursor) console.log(terminalText(`more: pdfapi template list --cursor ${page.next_cursor}`));
    });

  template
    .command('get')
    .description('A template’s latest version (or --version N); with -o, written as files create and update read.')
    .argument('<id>', 'tpl_…')
    .option('--version <n>', 'this version instead of the latest', kit.positiveInt)
    .option('-o, --output <dir>', 'write template.html, header.html, footer.html, schema.json, data.json and options.json here')
    .option('--json', 'print the whole version as JSON')
    .action(async (id: string, flags: { version?: number; output?: string; json?: boolean }, command: Command) => {
      const found = await getTemplate(kit.client(command), id, flags.version);
      if (flags.output !== undefined) {
        const written = await writeTemplateFiles(found, flags.output);
        if (!flags.json) console.log(terminalText(`wrote ${written.join(', ')} to ${flags.output}`));
      }
      if (flags.json) kit.printJson(found);
      else if (flags.output === undefined) printTemplate(found, kit);
    });

  kit
    .withDocumentFlags(
      fileFlags(
        template
          .command('update')
          .description('Save the next version: the latest version’s fields, with those given here replacing theirs (document flags replace single options).')
          .argument('<id>', 'tpl_…')
          .option('--from-version <n>', 'start from this version instead of the latest', kit.positiveInt),
        { required: false },
      ),
    )
    .action(async (id: string, flags: TemplateFileFlags & { fromVersion?: number }, command: Command) => {
      const fields = await fieldsFromFlags(flags, command, kit);
      const api = kit.client(command);
      const base = requestOf(await getTemplate(api, id, flags.fromVersion));
      // Options given replace the base's one by one; --options alone (no document flags) replaces them all.
      const options = fields.options === undefined ? base.options : flags.options !== undefined ? fields.options : { ...base.options, ...fields.options };
      const body: TemplateFields = { ...base, ...fields, ...(options !== undefined && { options }) };
      const saved = await api.templates.update(id, body);
      if (flags.json) kit.printJson(saved);
      else console.log(terminalText(`saved ${saved.template_id} version ${saved.version} (${saved.name})`));
    });

  template
    .command('delete')
    .description('Delete templates: nothing renders from them any more; PDFs made from them stay.')
    .argument('<id...>', 'tpl_…')
    .action(async (ids: string[], _flags: unknown, command: Command) => {
      const api = kit.client(command);
      for (const id of ids) {
        await api.templates.delete(id);
        console.log(terminalText(`deleted ${id}`));
      }
    });

  kit
    .withDocumentFlags(
      template
        .command('render')
        .description('Make a PDF from a template and data (stored and charged, as generate); options given here win over the template’s.')
        .argument('<id>', 'tpl_…')
        .option('--data <json|file>', 'the data, a JSON object: inline, a file, @file, or - for standard input; {} when absent')
        .option('--version <n>', 'render this version instead of the latest', kit.positiveInt)
        .option('-o, --output <file>', 'download the PDF to this file (- for standard output)')
        .option('--json', 'print the PDF record as JSON')
        .option('--idempotency-key <key>', 'safe to run again: the same key and request within 24 hours answer the first PDF, charged once'),
    )
    .action(async (id: string, flags: { data?: string; version?: number; output?: string; json?: boolean; idempotencyKey?: string }, command: Command) => {
      const data = await readData(flags.data);
      // Nothing is charged for a PDF that has nowhere to go.
      if (flags.output !== undefined) await kit.checkOutputFile(flags.output);
      const api = kit.client(command);
      const request = { template_id: id, ...(flags.version !== undefined && { template_version: flags.version }), ...(data !== undefined && { data }), ...kit.documentOptions(command) };
      const record = await api.generate(request, { idempotencyKey: flags.idempotencyKey });
      let notSaved: string | undefined;
      if (flags.output !== undefined) {
        try {
          await kit.save(await api.download(record), flags.output);
        } catch (error) {
          notSaved = kit.madeNotSaved(record, flags.output, error);
        }
      }
      // With the PDF on stdout, the record goes to stderr so a pipe gets the file alone.
      const log = flags.output === '-' ? console.error : console.log;
      if (flags.json) log(terminalJson(record));
      else if (flags.output === '-') log(terminalText(`${record.id}: ${record.pages} ${record.pages === 1 ? 'page' : 'pages'} from ${id} version ${record.template_version ?? '?'}`));
      else {
        kit.printRecord(record);
        if (flags.output !== undefined && notSaved === undefined) console.log(`saved ${flags.output}`);
      }
      if (notSaved !== undefined) throw new Error(notSaved);
    });

  template
    .command('preview')
    .description('The PDF a template makes with data (or its sample data), answered directly: not stored, not charged, rate-limited.')
    .argument('<id>', 'tpl_…')
    .requiredOption('-o, --output <file>', 'write the PDF here (- for standard output)')
    .option('--data <json|file>', 'the data, a JSON object: inline, a file, @file, or - for standard input; the template’s sample_data when absent')
    .option('--version <n>', 'preview this version instead of the latest', kit.positiveInt)
    .action(async (id: string, flags: { data?: string; version?: number; output: string }, command: Command) => {
      const data = await readData(flags.data);
      await kit.checkOutputFile(flags.output);
      const api = kit.client(command);
      const preview = await api.templates.preview(id, { ...(data !== undefined && { data }), ...(flags.version !== undefined && { version: flags.version }) });
      await kit.save(preview.pdf, flags.output);
      const version = preview.version ?? '?';
      const pages = String(preview.pages ?? '?');
      const line = terminalText(`${id} version ${version}: ${pages} ${pages === '1' ? 'page' : 'pages'}${flags.output === '-' ? '' : `, saved ${flags.output}`} (a preview: not stored, not charged)`);
      (flags.output === '-' ? console.error : console.log)(line);
    });
}

async function getTemplate(api: PdfApiClient, id: string, version: number | undefined): Promise<Template> {
  return api.templates.get(id, { version });
}
