/**
 * What a customer-code worker does (./worker.ts runs these; ./pool.ts sends them): fill a stored
 * template with a document's data, after checking the data against the template's data_schema;
 * check a template being saved; or read a large html document (parse5 takes about 0.4 ms of CPU a
 * KB of table markup: 2 s for 5 MB). Plain functions of their input, so they are tested in-process
 * too.
 *
 * A refusal comes back as plain data (class instances do not cross a thread): which party is at
 * fault and the customer-safe words for it.
 */
import { checkTemplateSyntax, renderTemplate, TemplateError, type TemplateSourceName, type TemplateSources } from '#lib/templates/engine.ts';
import { compileDataSchema, type DataValidator } from '#lib/templates/template-data.ts';
import { inspectHtml, type HtmlInspection } from '#lib/render/html.ts';
import { markdownToHtml } from '#lib/render/markdown.ts';

export type CustomerCodeTask =
  | {
      readonly kind: 'fill-template';
      readonly sources: TemplateSources;
      readonly data: unknown;
      readonly locale?: string;
      /** The version's data_schema, under a name unique to that key, template and version (its compiled form is kept by that name). */
      readonly schema?: { readonly version: string; readonly dataSchema: unknown };
    }
  | { readonly kind: 'check-template'; readonly sources: TemplateSources; readonly dataSchema?: unknown; readonly sampleData?: unknown }
  | { readonly kind: 'inspect-html'; readonly html: string }
  /** A `markdown` document: turned into HTML (lib/render/markdown.ts), then read as html is. */
  | { readonly kind: 'read-markdown'; readonly markdown: string; readonly css?: string };

/**
 * Who is at fault: `template` (its Liquid, or a limit it hit while rendering), `data` (the
 * document's data does not match the data_schema), `schema` (a template being saved: its schema,
 * or its sample_data against it), `html` (a document past the limits of reading it).
 */
export type Refusal = {
  readonly refusal: 'template' | 'data' | 'schema' | 'html';
  readonly detail: string;
  readonly source?: TemplateSourceName;
  readonly line?: number;
  readonly column?: number;
};

export type TaskOutcome = { readonly sources: TemplateSources } | { readonly checked: true } | { readonly inspection: HtmlInspection; readonly html?: string } | Refusal;

/** What a task is doing, for the pool to hold each step to its own time limit. */
export type TaskStep = 'data-check' | 'fill' | 'save-check' | 'inspect';

/** Compiled data_schemas by version, per worker: a bulk job fills thousands of documents from one. */
const validators = new Map<string, DataValidator | { problem: string }>();
const MAX_VALIDATORS = 16;

function validatorFor(version: string, dataSchema: unknown): DataValidator | { problem: string } {
  let validator = validators.get(version);
  if (!validator) {
    validator = compileDataSchema(dataSchema);
    if (validators.size >= MAX_VALIDATORS) validators.delete(validators.keys().next().value as string);
    validators.set(version, validator);
  }
  return validator;
}

function templateRefusal(error: unknown): Refusal {
  if (!(error instanceof TemplateError)) throw error;
  return {
    refusal: 'template',
    detail: error.detail,
    ...(error.source !== undefined && { source: error.source }),
    ...(error.line !== undefined && { line: error.line }),
    ...(error.column !== undefined && { column: error.column }),
  };
}

/** Runs one task; `enter` is told each step as it begins. Errors other than refusals are bugs, and thrown. */
export async function runTask(task: CustomerCodeTask, enter: (step: TaskStep) => void = () => {}): Promise<TaskOutcome> {
  if (task.kind === 'inspect-html') {
    enter('inspect');
    return { inspection: inspectHtml(task.html) };
  }
  if (task.kind === 'read-markdown') {
    enter('inspect');
    const html = await markdownToHtml(task.markdown, task.css);
    return { inspection: inspectHtml(html), html };
  }
  if (task.kind === 'check-template') {
    enter('save-check');
    try {
      checkTemplateSyntax(task.sources);
    } catch (error) {
      return templateRefusal(error);
    }
    if (task.dataSchema === undefined) return { checked: true };
    const validator = compileDataSchema(task.dataSchema);
    if ('problem' in validator) return { refusal: 'schema', detail: validator.problem };
    if (task.sampleData !== undefined) {
      const problem = validator(task.sampleData);
      if (problem) return { refusal: 'schema', detail: `sample_data does not match data_schema: ${problem}` };
    }
    return { checked: true };
  }
  if (task.schema) {
    enter('data-check');
    const validator = validatorFor(task.schema.version, task.schema.dataSchema);
    // Compiled once already when it was saved; a dialect or limit changed since refuses the data.
    const problem = 'problem' in validator ? validator.problem : validator(task.data);
    if (problem) return { refusal: 'data', detail: problem };
  }
  enter('fill');
  try {
    return { sources: await renderTemplate(task.sources, task.data, task.locale === undefined ? {} : { locale: task.locale }) };
  } catch (error) {
    return templateRefusal(error);
  }
}
