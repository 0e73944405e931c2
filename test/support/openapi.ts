/**
 * Checking live answers against the OpenAPI document the API serves: the document's own response
 * schemas, compiled by Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

type Document = { paths: Record<string, Record<string, { operationId: string; responses: Record<string, any> }>> };

/** A checker of `(operationId, status, body, headers)` against what the document says that answer is. */
export function responseChecker(document: Document) {
  // `example` and friends are annotations Ajv does not know; formats are covered by the schemas' patterns.
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema({ ...document, $id: 'openapi.json' });
  const operations = new Map(
    Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => [operation.operationId, operation] as const)),
  );

  return function expectDocumented(operationId: string, response: { status: number; body: unknown; headers?: Headers }): void {
    const operation = operations.get(operationId);
    expect(operation, `operation ${operationId}`).toBeDefined();
    const documented = operation!.responses[String(response.status)];
    expect(documented, `${operationId} documents status ${response.status}`).toBeDefined();
    const schema = documented.content?.['application/json']?.schema;
    if (schema) {
      // Inline schemas point into the document ('#/components/...'): compiled on their own, they name it.
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/', '"openapi.json#/')));
      const valid = validate!(response.body);
      expect(valid ? [] : validate!.errors, `${operationId} ${response.status}: ${JSON.stringify(response.body).slice(0, 300)}`).toEqual([]);
    }
    for (const [name, header] of Object.entries((documented.headers ?? {}) as Record<string, { required?: boolean }>)) {
      if (header.required && response.headers) expect(response.headers.get(name), `${operationId} ${response.status} header ${name}`).not.toBeNull();
    }
  };
}
