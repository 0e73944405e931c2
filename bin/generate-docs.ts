/**
 * `npm run generate:docs`: writes docs/options.md, the reference of every request field, from the
 * OpenAPI document (lib/api/openapi.ts), which zod-openapi builds from the very schemas that
 * validate requests. So the reference, `GET /v1/openapi.json`, the docs page, the playground, the
 * typed client and the CLI all say the same thing, and a field's words live in one place: its
 * schema's description. test/unit/docs-drift.test.ts fails when the checked-in file differs.
 * Only the grouping by task is this file's own.
 *
 * It also writes the generated parts of hand-written pages (between `<!-- generated: name -->` and
 * `<!-- end generated: name -->`): docs/api.md's error tables, from the catalogues the API answers
 * from (lib/api/errors.ts, lib/documents/batch.ts), and docs/deploying.md's table of what the stack
 * creates, counted from the synthesized template. What cannot be generated without losing its
 * words (the endpoint list, the settings, the CDK switches, the events/ table) is checked against
 * the code by test/unit/docs-facts.test.ts instead.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { API_ERRORS } from '#lib/api/errors.ts';
import { openApiDocument } from '#lib/api/openapi.ts';
import { BATCH_ITEM_ERRORS, MERGE_ERRORS } from '#lib/documents/batch.ts';
import { synthesizedTemplate, type StackTemplate } from '../cdk/template.ts';

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
  { title: 'What to print', fields: ['html', 'url', 'markdown', 'css', 'template_id', 'template_version', 'data'] },
  { title: 'Paper and layout', fields: ['format', 'width', 'height', 'orientation', 'margin', 'prefer_css_page_size', 'scale', 'page_ranges'] },
  { title: 'Headers and footers', fields: ['header_html', 'footer_html'] },
  { title: 'When to print', fields: ['wait_for', 'wait_for_selector', 'wait_for_expression', 'wait_delay_ms', 'emulate_media'] },
  { title: 'The file', fields: ['print_background', 'tagged', 'outline', 'metadata_pdf', 'watermark', 'encryption', 'filename', 'thumbnail'] },
  { title: 'Signing', fields: ['signature'] },
  { title: 'Pictures (`POST /v1/image/generate`)', fields: ['image'] },
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

/**
 * A hand-written page's generated part: the lines between `<!-- generated: <name> ... -->` and
 * `<!-- end generated: <name> -->`, replaced whole; the words around it stay the page's own.
 */
export function withRegion(text: string, name: string, body: string): string {
  const start = new RegExp(`^<!-- generated: ${name}\\b.*-->$`, 'm').exec(text);
  const end = text.indexOf(`<!-- end generated: ${name} -->`);
  if (!start || end < start.index) throw new Error(`no <!-- generated: ${name} ... --> ... <!-- end generated: ${name} --> region`);
  const after = start.index + start[0].length;
  return `${text.slice(0, after)}\n\n${body.trim()}\n\n${text.slice(end)}`;
}

/** docs/api.md's error table: every code the API answers with, from the catalogue `ApiError` takes its status from. */
export function errorTable(): string {
  const rows = Object.entries(API_ERRORS).map(([name, entry]) => {
    const extra = 'extra' in entry ? Object.keys(entry.extra).map(code).join(', ') : '';
    return `| ${entry.status} | ${code(name)} | ${extra} | ${cell(entry.description)} |`;
  });
  return ['| Status | `code` | Extra fields | When |', '|---|---|---|---|', ...rows].join('\n');
}

/** docs/api.md's batch item and merge errors, from the catalogues the OpenAPI document describes them with. */
export function itemErrorTables(): string {
  const table = (head: string, codes: Record<string, string>) => [head, '|---|---|', ...Object.entries(codes).map(([name, meaning]) => `| ${code(name)} | ${cell(meaning)} |`)].join('\n');
  return `${table('| Item `error.code` | When |', BATCH_ITEM_ERRORS)}\n\n${table('| `merge_error` | When |', MERGE_ERRORS)}`;
}

/**
 * What each kind of resource of the stack is, in a reader's words. A kind the stack gains without
 * words here stops `npm run generate:docs` (and the drift test) until it is described.
 */
const RESOURCE_WORDS: Readonly<Record<string, string>> = {
  'AWS::ApiGateway::RestApi': 'the regional REST API',
  'AWS::ApiGateway::Stage': 'its `prod` stage (throttling, access logs, tracing)',
  'AWS::ApiGateway::Deployment': 'its deployment',
  'AWS::ApiGateway::Account': "API Gateway's account-level CloudWatch role setting (one per account and region)",
  'AWS::ApiGateway::Resource': 'API paths, from `lib/api/routes.ts`',
  'AWS::ApiGateway::Method': 'API methods: each route, and `ANY` to the fallback function on every path',
  'AWS::ApiGateway::GatewayResponse': "API Gateway's own errors rewritten in the API's error shape",
  'AWS::Lambda::Function': 'Lambda functions, one per file of `functions/`',
  'AWS::Lambda::LayerVersion': 'the Chromium layer (`@sparticuz/chromium`)',
  'AWS::Lambda::Permission': 'permissions for API Gateway and EventBridge to invoke the functions',
  'AWS::Lambda::EventInvokeConfig': "the job function's asynchronous retries and failure destination",
  'AWS::Lambda::EventSourceMapping': 'SQS event sources: the bulk queue to the bulk worker, the failure queues to the reconcile function',
  'AWS::Lambda::Version': 'published function versions (with provisioned concurrency)',
  'AWS::Lambda::Alias': '`live` aliases (with provisioned concurrency)',
  'AWS::IAM::Role': "roles: one per function (least privilege, from its profile in `lib/api/routes.ts`), and API Gateway's logging role",
  'AWS::IAM::Policy': "the functions' inline policies",
  'AWS::Logs::LogGroup': 'log groups: one per function and the API access log',
  'AWS::Logs::MetricFilter': 'metric filters: render errors counted from the Chromium functions\' logs',
  'AWS::DynamoDB::Table': 'DynamoDB tables: the service table (keys, counters, PDF, job and template records) and the Idempotency-Key table',
  'AWS::S3::Bucket': 'S3 buckets: the PDFs (and job requests, results, uploads, bulk files, template bodies) and its access logs',
  'AWS::S3::BucketPolicy': 'bucket policies (TLS only; log delivery)',
  'AWS::SecretsManager::Secret': 'the download-link signing key',
  'AWS::KMS::Key': 'the KMS key that seals the requests of asynchronous jobs',
  'AWS::SQS::Queue': "SQS queues: the bulk queue, the job function's failure queue, and a dead-letter queue for each",
  'AWS::SQS::QueuePolicy': 'queue policies (TLS only)',
  'AWS::Events::Rule': 'EventBridge schedules: reconcile every 5 minutes, webhooks every minute',
  'AWS::SNS::Topic': 'the alarm topic',
  'AWS::SNS::TopicPolicy': 'its policy (TLS only)',
  'AWS::SNS::Subscription': 'the `alarmEmail` subscription',
  'AWS::CloudWatch::Alarm': 'CloudWatch alarms (docs/operating.md, "Alarms")',
};

/** docs/deploying.md's table of what the stack creates, counted from the synthesized template. */
export function resourceTable(template: StackTemplate = synthesizedTemplate()): string {
  const byType = new Map<string, string[]>();
  for (const [id, resource] of Object.entries(template.Resources)) byType.set(resource.Type, [...(byType.get(resource.Type) ?? []), id]);
  const undescribed = [...byType.keys()].filter((type) => !RESOURCE_WORDS[type]);
  if (undescribed.length > 0) throw new Error(`bin/generate-docs.ts: describe ${undescribed.join(', ')} in RESOURCE_WORDS`);
  const rows = Object.entries(RESOURCE_WORDS)
    .filter(([type]) => byType.has(type))
    .map(([type, words]) => {
      const ids = byType.get(type)!;
      return `| ${ids.length} | ${code(type)} | ${cell(words)} |`;
    });
  return ['| How many | Type | What |', '|---|---|---|', ...rows].join('\n');
}

/** Each generated file's path and text: docs/options.md whole, and the generated parts of api.md and deploying.md. */
export function generatedDocs(): Record<string, string> {
  const page = (name: string) => readFileSync(join(DOCS, name), 'utf8');
  let api = page('api.md');
  api = withRegion(api, 'errors', errorTable());
  api = withRegion(api, 'item-errors', itemErrorTables());
  const deploying = withRegion(page('deploying.md'), 'resources', resourceTable());
  return { [join(DOCS, 'options.md')]: optionsReference(), [join(DOCS, 'api.md')]: api, [join(DOCS, 'deploying.md')]: deploying };
}

if (import.meta.main) {
  for (const [path, text] of Object.entries(generatedDocs())) {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}
