/**
 * A template's data_schema (lib/templates/template-data.ts): what a customer's schema may be, and
 * how data failing it is named (by JSON pointer), and the recursive schemas refused. Schemas and
 * data built to be slow are ended by the customer-code worker's limits: customer-code-pool.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { compileDataSchema, type DataValidator } from '#lib/templates/template-data.ts';

function compiled(schema: unknown): DataValidator {
  const result = compileDataSchema(schema);
  if ('problem' in result) throw new Error(result.problem);
  return result;
}

const INVOICE_SCHEMA = {
  type: 'object',
  required: ['total', 'lines'],
  additionalProperties: false,
  properties: {
    total: { type: 'number' },
    email: { type: 'string', format: 'email' },
    lines: { type: 'array', items: { $ref: '#/$defs/line' } },
  },
  $defs: { line: { type: 'object', required: ['price'], properties: { price: { type: 'number' }, 'a/b~c': { type: 'string' } } } },
};

describe('data checked against data_schema', () => {
  it.each([
    ['a wrong type deep in an array', { total: 1, lines: [{ price: 1 }, { price: 2 }, { price: 3 }, { price: 'x' }] }, '/lines/3/price: must be number'],
    ['a missing property, named itself', { lines: [] }, '/total: is required'],
    ['a missing property in an item', { total: 1, lines: [{}] }, '/lines/0/price: is required'],
    ['a property not allowed', { total: 1, lines: [], colour: 'red' }, '/colour: is not allowed'],
    ['a format', { total: 1, lines: [], email: 'not an email' }, '/email: must match format "email"'],
    ['the data itself', 'a string', '(root): must be object'],
    ['a key with / and ~, escaped as JSON pointers are', { total: 1, lines: [{ price: 1, 'a/b~c': 5 }] }, '/lines/0/a~1b~0c: must be string'],
  ])('names %s by its JSON pointer', (_, data, message) => {
    // Act
    const problem = compiled(INVOICE_SCHEMA)(data);

    // Assess
    expect(problem).toBe(message);
  });

  it('accepts data that matches', () => {
    expect(compiled(INVOICE_SCHEMA)({ total: 1280.5, lines: [{ price: 1200 }, { price: 80.5 }], email: 'a@example.com' })).toBeUndefined();
  });

  it('takes draft-07 and 2019-09 schemas by their $schema', () => {
    const draft7 = compiled({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', definitions: { n: { type: 'number' } }, properties: { n: { $ref: '#/definitions/n' } } });
    const draft2019 = compiled({ $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', properties: { n: { type: 'number' } } });
    expect(draft7({ n: 'x' })).toBe('/n: must be number');
    expect(draft2019({ n: 'x' })).toBe('/n: must be number');
  });
});

describe('what a data_schema may be', () => {
  it.each([
    ['not an object', [1, 2], 'data_schema must be a JSON Schema'],
    ['invalid against its meta-schema', { type: 'numbr' }, 'data_schema is not a valid JSON Schema: data_schema/type'],
    ['an unknown dialect', { $schema: 'http://json-schema.org/draft-04/schema#' }, 'is not supported'],
    ['a remote reference', { properties: { a: { $ref: 'https://example.com/a.json' } } }, 'refers to https://example.com/a.json'],
    ['a reference to a file', { $ref: 'file:///etc/passwd' }, 'refers to file:///etc/passwd'],
    ['a local reference to nothing', { $ref: '#/$defs/missing' }, 'data_schema is not a valid JSON Schema'],
    ['larger than 64 KB', { enum: ['x'.repeat(70_000)] }, 'at most 65536 bytes'],
    ['a reference to itself at the root', { $ref: '#' }, 'refers to itself without stepping into the data'],
    ['two definitions that refer to each other through allOf', { $ref: '#/$defs/a', $defs: { a: { allOf: [{ $ref: '#/$defs/b' }] }, b: { anyOf: [{ $ref: '#/$defs/a' }] } } }, 'refers to itself'],
    ['a cycle through an anchor', { $defs: { a: { $anchor: 'node', not: { $ref: '#node' } } }, properties: { x: { $ref: '#node' } } }, 'refers to itself'],
    ['a $dynamicRef (2020-12)', { $dynamicAnchor: 'node', type: 'object', properties: { children: { type: 'array', items: { $dynamicRef: '#node' } } } }, 'uses $dynamicRef, which is not supported'],
    ['a $recursiveRef (2019-09)', { $schema: 'https://json-schema.org/draft/2019-09/schema', $recursiveAnchor: true, properties: { c: { $recursiveRef: '#' } } }, 'uses $recursiveRef'],
  ])('refuses one that is %s, saying why', (_, schema, message) => {
    // Act
    const result = compileDataSchema(schema);

    // Assess
    expect(result).toHaveProperty('problem');
    expect((result as { problem: string }).problem).toContain(message);
  });

  it('ignores keywords it does not know (annotations), as JSON Schema says', () => {
    expect(compiled({ type: 'object', title: 'Invoice', 'x-editor': { colour: 'blue' } })({})).toBeUndefined();
  });
});

describe('schemas that describe trees', () => {
  it('takes a $ref back up from inside properties or items: it ends with the data', () => {
    // Prepare
    const tree = compiled({
      $defs: { node: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } } },
      $ref: '#/$defs/node',
    });

    // Act and assess
    expect(tree({ name: 'root', children: [{ name: 'a', children: [{ name: 'b' }] }] })).toBeUndefined();
    expect(tree({ name: 'root', children: [{ name: 'a', children: [{ name: 3 }] }] })).toBe('/children/0/children/0/name: must be string');
  });
});
