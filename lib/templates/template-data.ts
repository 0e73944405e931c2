/**
 * A template's `data_schema` (JSON Schema) and the data checked against it, with Ajv.
 *
 * A schema comes from a customer, so it is treated as untrusted code: Ajv compiles it to a
 * function. What keeps that safe to run for many tenants:
 * - each schema is compiled by an Ajv instance of its own (no `$id` of one customer can shadow or
 *   reach another's, and nothing accumulates in a shared cache);
 * - no remote references: a `$ref` outside the schema is refused at save (Ajv gets no loader);
 * - time: compiling and validating run under a watchdog (node:vm's timeout, which interrupts any
 *   JavaScript, a catastrophically backtracking `pattern` included), so a schema or data built to be
 *   slow (nested quantifiers, `uniqueItems` over a huge array of objects) is refused, never a stuck
 *   function; and the schema itself is at most MAX_DATA_SCHEMA_BYTES.
 *
 * Dialects: 2020-12 (the default, OpenAPI 3.1's), 2019-09 and draft-07, chosen by `$schema`.
 */
import { Script, createContext } from 'node:vm';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { quoteInput } from '#lib/render/errors.ts';

/** Largest data_schema accepted, as JSON: schemas describe documents' data and are small by nature. */
export const MAX_DATA_SCHEMA_BYTES = 64 * 1024;
/**
 * Longest checking one document's data against its schema may take, and compiling a schema. Both
 * are wall-clock limits, so they leave room for a busy machine: a real schema compiles in 20 to
 * 150 ms (the first in a process includes Ajv's own warm-up) and checks a document's data in
 * under 5 ms; a schema or data built to be slow takes seconds to forever.
 */
export const DATA_SCHEMA_TIME_LIMIT_MS = 2_000;
export const DATA_SCHEMA_COMPILE_LIMIT_MS = 5_000;

const DIALECTS = {
  'https://json-schema.org/draft/2020-12/schema': () => new Ajv2020(AJV_OPTIONS),
  'https://json-schema.org/draft/2019-09/schema': () => new Ajv2019(AJV_OPTIONS),
  'http://json-schema.org/draft-07/schema': () => new Ajv(AJV_OPTIONS),
} as const;

/**
 * `strict: false`: keywords Ajv does not know (`title`, `x-…`, editor annotations) are allowed and
 * ignored, as JSON Schema says; the schema must still be valid against its dialect's meta-schema.
 * No `loadSchema`: nothing is ever fetched.
 */
const AJV_OPTIONS = { strict: false, allErrors: false, validateSchema: true, addUsedSchema: false } as const;

// ajv-formats is CommonJS: its plugin is the module itself, and `default` too.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv, options?: object) => Ajv;

/**
 * A compiled data_schema: answers the first problem with the data as `<JSON pointer>: <what is
 * wrong>` (`/lines/3/price: must be number`), or undefined when the data matches.
 */
export type DataValidator = (data: unknown) => string | undefined;

/** Runs `work` under the watchdog: its result, or `timedOut` when it took longer than the limit. */
const guarded = (() => {
  const context = createContext({});
  const script = new Script('work()');
  return <T>(work: () => T, timeoutMs: number): T | { timedOut: true } => {
    context.work = work;
    try {
      return script.runInContext(context, { timeout: timeoutMs }) as T;
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return { timedOut: true };
      throw error;
    } finally {
      context.work = undefined;
    }
  };
})();

const timedOut = (value: unknown): value is { timedOut: true } => typeof value === 'object' && value !== null && 'timedOut' in value && Object.keys(value).length === 1;

/**
 * Compiles a data_schema, or says what is wrong with it (for a 400 that names the problem): not a
 * schema, an unknown dialect, a reference outside the schema, too large, too slow to compile.
 */
export function compileDataSchema(schema: unknown): DataValidator | { problem: string } {
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    return { problem: 'data_schema must be a JSON Schema: an object (or true or false)' };
  }
  const size = Buffer.byteLength(JSON.stringify(schema), 'utf8');
  if (size > MAX_DATA_SCHEMA_BYTES) return { problem: `data_schema must be at most ${MAX_DATA_SCHEMA_BYTES} bytes as JSON; it is ${size}` };
  const dialect = typeof schema === 'object' ? (schema as { $schema?: unknown }).$schema : undefined;
  const make = dialect === undefined ? DIALECTS['https://json-schema.org/draft/2020-12/schema'] : DIALECTS[String(dialect).replace(/#$/, '') as keyof typeof DIALECTS];
  if (!make) {
    return { problem: `data_schema.$schema ${quoteInput(JSON.stringify(dialect))} is not supported; use ${Object.keys(DIALECTS).map((uri) => JSON.stringify(uri)).join(', ')} or leave it out (2020-12)` };
  }
  const remote = remoteReference(schema);
  if (remote) return { problem: `data_schema refers to ${quoteInput(remote)}: only references within the schema itself (such as "#/$defs/line") are supported` };

  const compiled = guarded(() => {
    try {
      const ajv = make();
      addFormats(ajv, { mode: 'fast' });
      if (!ajv.validateSchema(schema as object)) return { problem: `data_schema is not a valid JSON Schema: ${describeDataError(ajv.errors?.[0], 'data_schema')}` };
      return ajv.compile(schema as object);
    } catch (error) {
      return { problem: `data_schema is not a valid JSON Schema: ${quoteInput((error as Error).message ?? String(error))}` };
    }
  }, DATA_SCHEMA_COMPILE_LIMIT_MS);
  if (timedOut(compiled)) return { problem: `data_schema took longer than ${DATA_SCHEMA_COMPILE_LIMIT_MS} ms to compile; simplify it` };
  if ('problem' in compiled) return compiled as { problem: string };
  const validate = compiled as ValidateFunction;
  return (data) => {
    const valid = guarded(() => validate(data), DATA_SCHEMA_TIME_LIMIT_MS);
    if (timedOut(valid)) return `(root): took longer than ${DATA_SCHEMA_TIME_LIMIT_MS} ms to check; simplify the schema or the data`;
    if (valid) return undefined;
    return describeDataError(validate.errors?.[0]);
  };
}

/**
 * One Ajv error as `<JSON pointer>: <what is wrong>`, the pointer naming the value itself (for a
 * missing or extra property, the property): `/lines/3/price: must be number`.
 */
export function describeDataError(error: ErrorObject | undefined, root = '(root)'): string {
  if (!error) return `${root}: is not valid`;
  const child = (name: unknown) => `${error.instancePath}/${String(name).replaceAll('~', '~0').replaceAll('/', '~1')}`;
  let pointer = error.instancePath;
  let message = error.message ?? 'is not valid';
  if (error.keyword === 'required') {
    pointer = child((error.params as { missingProperty: string }).missingProperty);
    message = 'is required';
  } else if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') {
    pointer = child((error.params as { additionalProperty?: string; unevaluatedProperty?: string }).additionalProperty ?? (error.params as { unevaluatedProperty?: string }).unevaluatedProperty);
    message = 'is not allowed';
  }
  return `${quoteInput(root === '(root)' ? pointer || root : `${root}${pointer}`)}: ${message}`;
}

/** The first `$ref` or `$dynamicRef` that points outside the schema (anything but `#…`), if any. */
function remoteReference(schema: unknown): string | undefined {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    for (const [name, value] of Object.entries(node)) {
      // Values, not schemas: whatever they hold is data.
      if (name === 'enum' || name === 'const' || name === 'default' || name === 'examples') continue;
      if ((name === '$ref' || name === '$dynamicRef' || name === '$recursiveRef') && typeof value === 'string' && !value.startsWith('#')) return value;
      stack.push(value);
    }
  }
  return undefined;
}
