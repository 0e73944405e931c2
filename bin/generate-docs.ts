/**
 * `npm run generate:docs`: writes docs/options.md, the reference of every request field, from the
 * OpenAPI document (lib/api/openapi.ts), which zod-openapi builds from the very schemas that
 * validate requests. So the reference, `GET /v1/openapi.json`, the docs page, the playground, the
 * typed client and the CLI all say the same thing, and a field's words live in one place: its
 * schema's description. test/unit/docs-drift.test.ts fails when the checked-in file differs.
 *
 * Only the grouping by task is this file's own.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '#lib/api/openapi.ts';

const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));

/** A JSON Schema as zod-openapi writes it (the parts read here). */
interface Schema {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly description?: string;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly format?: string;
  readonly default?: unknown;
  readonly examples?: readonly unknown[];
  readonly example?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly maxProperties?: number;
  readonly items?: Schema;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: Schema | boolean;
  readonly anyOf?: readonly Schema[];
  readonly oneOf?: readonly Schema[];
}

/** The document's fields by task, in the order a reader looks for them. Every field of a generate request must be in one. */
const GROUPS: readonly { readonly title: string; readonly fields: readonly string[] }[] = [
  { title: 'What to print', fields: ['html', 'url', 'template_id', 'template_version', 'data'] },
  { title: 'Paper and layout', fields: ['format', 'width', 'height', 'orientation', 'margin', 'prefer_css_page_size', 'scale', 'page_ranges'] },
  { title: 'Headers and footers', fields: ['header_html', 'footer_html'] },
  { title: 'When to print', fields: ['wait_for', 'wait_for_selector', 'wait_for_expression', 'wait_delay_ms', 'emulate_media'] },
  { title: 'The file', fields: ['print_background', 'tagged', 'outline', 'metadata_pdf', 'watermark', 'encryption', 'filename'] },
  { title: 'Fetching a url', fields: ['http_headers', 'cookies', 'basic_auth', 'user_agent', 'fail_on_http_status'] },
  { title: 'Asynchronous jobs', fields: ['async', 'webhook_url'] },
];

const code = (value: unknown) => '`' + (typeof value === 'string' ? value : JSON.stringify(value)).replaceAll('`', 'ˋ') + '`';
/** Text in a table cell: one line, pipes escaped. */
const cell = (text: string) => text.replace(/\s*\n+\s*/g, ' ').replaceAll('|', '\\|');
const anchor = (title: string) => title.toLowerCase().replace(/[^a-z0-9 -]/g, '').replaceAll(' ', '-');
const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

const number = (value: number) => value.toLocaleString('en-US');

/** A range in words; zod's whole numbers are bounded by the safe integers, which is no bound to a reader. */
function range(low: number | undefined, high: number | undefined, unit: string): string {
  const from = low !== undefined && low > Number.MIN_SAFE_INTEGER ? low : undefined;
  const to = high !== undefined && high < Number.MAX_SAFE_INTEGER ? high : undefined;
  if (from !== undefined && to !== undefined) return `${number(from)} to ${number(to)}${unit}`;
  if (from !== undefined) return unit && from === 1 ? 'not empty' : `at least ${number(from)}${unit}`;
  if (to !== undefined) return `at most ${number(to)}${unit}`;
  return '';
}

/** The document options (generate's), to name a set of them rather than spell each out again. */
let documentOptionNames: ReadonlySet<string> = new Set();

/** What a schema accepts, in a few words: its type, values, lengths and ranges, and an object's fields. */
function accepts(schema: Schema): string {
  if (schema.$ref) return `a ${refName(schema.$ref)} ([below](#${refName(schema.$ref).toLowerCase()}))`;
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return alternatives.map(accepts).join(', or ');
  if (schema.enum) return `one of ${schema.enum.map(code).join(', ')}`;
  if (schema.const !== undefined) return code(schema.const);
  const types = typeof schema.type === 'string' ? [schema.type] : (schema.type ?? []);
  if (types.length > 1) return types.map((type) => accepts({ ...schema, type })).join(' or ');
  const words = (base: string, ...details: string[]) => [base, ...details.filter(Boolean)].join(', ');
  switch (types[0]) {
    case 'string':
      return words(schema.format === 'uri' ? 'URL' : 'string', range(schema.minLength, schema.maxLength, ' characters'));
    case 'integer':
    case 'number': {
      const low = schema.minimum ?? schema.exclusiveMinimum;
      const high = schema.maximum ?? schema.exclusiveMaximum;
      return words(types[0] === 'integer' ? 'whole number' : 'number', range(low, high, ''));
    }
    case 'boolean':
      return 'true or false';
    case 'array':
      return words(`array of ${schema.items ? accepts(schema.items) : 'anything'}`, range(schema.minItems, schema.maxItems, ' items'));
    case 'object': {
      const names = Object.keys(schema.properties ?? {});
      if (names.length > 5 && names.every((name) => documentOptionNames.has(name))) {
        const left = [...documentOptionNames].filter((name) => !names.includes(name));
        return `the document options of generate ([above](#${anchor('POST /v1/pdf/generate')}))${left.length ? `, but ${left.map(code).join(', ')}` : ''}`;
      }
      if (schema.properties && names.length > 0) {
        const fields = Object.entries(schema.properties).map(
          ([name, field]) => `${code(name)} (${accepts(field)}${schema.required?.includes(name) ? ', required' : ''})`,
        );
        return `object: ${fields.join('; ')}`;
      }
      if (typeof schema.additionalProperties !== 'object') return 'JSON object';
      return words(`object of ${accepts(schema.additionalProperties)} values`, range(undefined, schema.maxProperties, ' entries'));
    }
    default:
      return 'any JSON';
  }
}

/** A field's row: its name, what it accepts, its default, and its description with its example. */
function row(name: string, schema: Schema, required: boolean): string {
  const example = schema.examples?.[0] ?? schema.example;
  const described = [schema.description ?? '', example !== undefined ? `Example: ${code(example)}.` : ''].filter(Boolean).join(' ');
  const byDefault = schema.default !== undefined ? code(schema.default) : required ? 'required' : '';
  return `| ${code(name)} | ${cell(accepts(schema))} | ${cell(byDefault)} | ${cell(described)} |`;
}

const TABLE_HEAD = ['| Field | Accepts | Default | What it does |', '|---|---|---|---|'];

function fieldsTable(schema: Schema, names: readonly string[] = Object.keys(schema.properties ?? {})): string[] {
  return [...TABLE_HEAD, ...names.map((name) => row(name, schema.properties![name]!, schema.required?.includes(name) ?? false))];
}

/** docs/options.md: the generate request's fields grouped by task, then every other request body field by field. */
export function optionsReference(): string {
  const document = openApiDocument({ serverUrl: 'http://127.0.0.1:3000' }) as unknown as {
    components: { schemas: Record<string, Schema> };
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>>;
  };
  const schemas = document.components.schemas;
  const generate = schemas.GenerateRequest!;
  documentOptionNames = new Set(Object.keys(schemas.DocumentOptions?.properties ?? {}));
  const grouped = new Set(GROUPS.flatMap((group) => group.fields));
  const ungrouped = Object.keys(generate.properties ?? {}).filter((name) => !grouped.has(name));
  if (ungrouped.length > 0) throw new Error(`bin/generate-docs.ts: put ${ungrouped.join(', ')} in one of GROUPS`);

  const lines = [
    '# Request fields and options',
    '',
    '<!-- Generated by `npm run generate:docs` from the schemas that validate requests (lib/api/openapi.ts words them). Do not edit: test/unit/docs-drift.test.ts fails when this file is out of date. -->',
    '',
    `Every field of every request body, as the OpenAPI document (\`GET /v1/openapi.json\`) gives it: the same schemas validate requests, so nothing here can differ from what the API does.`,
    '',
    `## \`POST /v1/pdf/generate\``,
    '',
    generate.description ?? '',
    '',
    ...GROUPS.flatMap((group) => {
      const present = group.fields.filter((name) => generate.properties?.[name]);
      return present.length === 0 ? [] : [`### ${group.title}`, '', ...fieldsTable(generate, present), ''];
    }),
  ];

  // Every other request body, once, with the item schemas it names (a batch's BatchItem).
  const seen = new Set(['GenerateRequest', 'DocumentOptions']);
  const queue: { name: string; operations: string[] }[] = [];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const ref = operation.requestBody?.content?.['application/json']?.schema?.$ref;
      if (!ref) continue;
      const name = refName(ref);
      const known = queue.find((entry) => entry.name === name);
      if (known) known.operations.push(`${method.toUpperCase()} ${path}`);
      else if (!seen.has(name)) queue.push({ name, operations: [`${method.toUpperCase()} ${path}`] });
    }
  }
  for (let index = 0; index < queue.length; index++) {
    const { name, operations } = queue[index]!;
    if (seen.has(name)) continue;
    seen.add(name);
    const schema = schemas[name]!;
    lines.push(`## ${name}`, '', operations.length > 0 ? `The body of ${operations.map(code).join(' and ')}. ${schema.description ?? ''}`.trim() : (schema.description ?? ''), '', ...fieldsTable(schema), '');
    // Item schemas a body refers to get a section of their own, after it.
    const refs = JSON.stringify(schema.properties ?? {}).matchAll(/"\$ref":"([^"]+)"/g);
    for (const [, ref] of refs) if (!seen.has(refName(ref!))) queue.push({ name: refName(ref!), operations: [] });
  }
  lines.push(
    '## DocumentOptions',
    '',
    `${schemas.DocumentOptions?.description ?? ''} Each is described in [\`POST /v1/pdf/generate\`](#${anchor('POST /v1/pdf/generate')}) above.`,
    '',
  );
  return lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

/** Each generated file's path and text. */
export function generatedDocs(): Record<string, string> {
  return { [join(DOCS, 'options.md')]: optionsReference() };
}

if (import.meta.main) {
  for (const [path, text] of Object.entries(generatedDocs())) {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}
