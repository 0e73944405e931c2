/**
 * `npm run generate:client`: writes the client package's copy of the OpenAPI document
 * (packages/client/src/openapi.json, which the CLI builds its option flags from) and the types
 * openapi-typescript generates from it (schema.d.ts). Both are checked in so the client and the CLI
 * need no build step; test/unit/client-drift.test.ts fails when they no longer match the code.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import type { OpenAPI3 } from 'openapi-typescript';
import { openApiDocument } from '#lib/api/openapi.ts';

const CLIENT_SOURCES = fileURLToPath(new URL('../packages/client/src/', import.meta.url));

/** Each generated file's path and text. The server URL is the local stack's: any deployment's differs only there. */
export async function generatedClientFiles(): Promise<Record<string, string>> {
  const document = openApiDocument({ serverUrl: 'http://127.0.0.1:3000' });
  // emptyObjectsUnknown: a free-form JSON object (a template's `data`, `data_schema`) is any object to a caller, not an empty one.
  const nodes = await openapiTS(document as OpenAPI3, { exportType: true, emptyObjectsUnknown: true });
  return {
    [join(CLIENT_SOURCES, 'openapi.json')]: `${JSON.stringify(document, null, 2)}\n`,
    [join(CLIENT_SOURCES, 'schema.d.ts')]: `${COMMENT_HEADER.replace('openapi-typescript.', 'openapi-typescript from GET /v1/openapi.json: npm run generate:client.')}${astToString(nodes)}`,
  };
}

if (import.meta.main) {
  for (const [path, text] of Object.entries(await generatedClientFiles())) {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}
