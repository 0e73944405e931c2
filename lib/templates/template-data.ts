/**
 * A template's `data_schema` (JSON Schema) and the data checked against it, with Ajv.
 *
 * A schema comes from a customer, so it is treated as untrusted code: Ajv compiles it to a
 * function. What keeps that safe to run for many tenants:
 * - it runs only in a customer-code worker (lib/customer-code/pool.ts), which is terminated at its
 *   time limit and cannot grow its heap past its own: a catastrophically backtracking `pattern`, or
 *   data built to be slow, ends there, never on a thread that serves anyone else;
 * - each schema is compiled by an Ajv instance of its own (no `$id` of one customer can shadow or
 *   reach another's, and nothing accumulates in a shared cache);
 * - no remote references: a `$ref` outside the schema is refused at save (Ajv gets no loader);
 * - no recursion that never ends: a reference that leads back to itself without stepping into the
 *   data (`{"$ref": "#"}` at the root), and `$dynamicRef` / `$recursiveRef` (Ajv recurses without
 *   end on some of them), are refused at save; a schema may still describe a tree (a `$ref` back
 *   up from inside `properties` or `items` ends with the data, which is at most 64 levels deep).
 *
 * Dialects: 2020-12 (the default, OpenAPI 3.1's), 2019-09 and draft-07, chosen by `$schema`.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { quoteInput } from '#lib/render/errors.ts';

/** Largest data_schema accepted, as JSON: schemas describe documents' data and are small by nature. */
export const MAX_DATA_SCHEMA_BYTES = 64 * 1024;
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

  const endless = endlessRecursion(schema);
  if (endless) return { problem: endless };

  let validate: ReturnType<Ajv['compile']>;
  try {
    const ajv = make();
    addFormats(ajv, { mode: 'fast' });
    if (!ajv.validateSchema(schema as object)) return { problem: `data_schema is not a valid JSON Schema: ${describeDataError(ajv.errors?.[0], 'data_schema')}` };
    validate = ajv.compile(schema as object);
  } catch (error) {
    return { problem: `data_schema is not a valid JSON Schema: ${quoteInput((error as Error).message ?? String(error))}` };
  }
  return (data) => {
    try {
      if (validate(data)) return undefined;
    } catch (error) {
      // A backstop for a recursion endlessRecursion did not foresee: the worker's stack, not a 500.
      if (error instanceof RangeError) return '(root): the data_schema recurses too deeply to check this data; simplify it';
      throw error;
    }
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

/** Keywords whose subschemas apply to the same value as the schema holding them (not to a part of it). */
const IN_PLACE_APPLICATORS = ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas'] as const;

/**
 * Why the schema would recurse without end, if it would: `$dynamicRef` or `$recursiveRef`
 * anywhere, or a `$ref` that leads back to a schema it came from without a step into the data (only
 * through `$ref` and in-place applicators such as `allOf`). References are followed by JSON pointer
 * (`#/$defs/line`) and by `$anchor` (`#line`); one Ajv cannot resolve is refused by Ajv itself.
 */
function endlessRecursion(schema: unknown): string | undefined {
  const anchors = new Map<string, unknown>();
  const seen = new Set<unknown>();
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    for (const [name, value] of Object.entries(node)) {
      if (name === 'enum' || name === 'const' || name === 'default' || name === 'examples') continue;
      if (name === '$dynamicRef' || name === '$recursiveRef') return `data_schema uses ${name}, which is not supported; use $ref`;
      if (name === '$anchor' && typeof value === 'string') anchors.set(value, node);
      stack.push(value);
    }
  }
  const resolve = (reference: string): unknown => {
    if (!reference.startsWith('#')) return undefined;
    if (reference.length > 1 && !reference.startsWith('#/')) return anchors.get(decodeURIComponent(reference.slice(1)));
    let target: unknown = schema;
    for (const token of reference.slice(2).split('/').filter((part, index, parts) => part !== '' || parts.length > 1)) {
      const key = decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~');
      if (typeof target !== 'object' || target === null) return undefined;
      target = (target as Record<string, unknown>)[key];
    }
    return target;
  };
  /** The schemas that apply to the same value as `node` does. */
  const inPlace = (node: unknown): unknown[] => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return [];
    const record = node as Record<string, unknown>;
    const next: unknown[] = [];
    if (typeof record.$ref === 'string') next.push(resolve(record.$ref));
    for (const keyword of IN_PLACE_APPLICATORS) {
      const value = record[keyword];
      if (Array.isArray(value)) next.push(...value);
      else if (keyword === 'dependentSchemas' && typeof value === 'object' && value !== null) next.push(...Object.values(value));
      else next.push(value);
    }
    return next.filter((child) => typeof child === 'object' && child !== null);
  };
  // Depth-first search for a cycle among in-place edges, iterative (a schema may be deep).
  const state = new Map<unknown, 'open' | 'done'>();
  for (const start of seen) {
    if (state.has(start)) continue;
    const path: { node: unknown; next: unknown[] }[] = [{ node: start, next: inPlace(start) }];
    state.set(start, 'open');
    while (path.length > 0) {
      const top = path.at(-1)!;
      const child = top.next.pop();
      if (child === undefined) {
        state.set(top.node, 'done');
        path.pop();
        continue;
      }
      const seenState = state.get(child);
      if (seenState === 'open') return 'data_schema refers to itself without stepping into the data (a $ref that leads back to where it came from), so checking any data would never end';
      if (seenState === undefined) {
        state.set(child, 'open');
        path.push({ node: child, next: inPlace(child) });
      }
    }
  }
  return undefined;
}
