/**
 * `npm run generate:client`: writes the client package's copy of the OpenAPI document
 * (packages/client/src/openapi.json), the document options the CLI builds its flags from
 * (packages/cli/src/document-options.json) and the types
 * openapi-typescript generates from it (schema.d.ts). They are checked in so the sources type-check
 * and run without generating first; test/unit/client-drift.test.ts fails when they no longer match
 * the code.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import type { OpenAPI3 } from 'openapi-typescript';
import { openApiDocument } from '#lib/api/openapi.ts';

const CLIENT_SOURCES = fileURLToPath(new URL('../packages/client/src/', import.meta.url));
const CLI_SOURCES = fileURLToPath(new URL('../packages/cli/src/', import.meta.url));

/** Each generated file's path and text. The server URL is the local stack's: any deployment's differs only there. */
export async function generatedClientFiles(): Promise<Record<string, string>> {
  const document = openApiDocument({ serverUrl: 'http://127.0.0.1:3000' });
  // defaultNonNullable: false: an option with a default may be left out of a request (openapi-typescript
  // otherwise makes every defaulted field required, and the documented examples fail tsc). Only
  // request schemas carry defaults; what a response always has, the document lists as required.
  // emptyObjectsUnknown: a free-form JSON object (a template's `data`, `data_schema`) is any object to a caller, not an empty one.
  const nodes = await openapiTS(document as OpenAPI3, { exportType: true, emptyObjectsUnknown: true, defaultNonNullable: false });
  const documentOptions = document.components?.schemas?.DocumentOptions;
  return {
    [join(CLIENT_SOURCES, 'openapi.json')]: `${JSON.stringify(document, null, 2)}\n`,
    // The part of the document the CLI builds its flags and help from: bundled, the whole document
    // would be most of the CLI's size and of its start-up time.
    [join(CLI_SOURCES, 'document-options.json')]: `${JSON.stringify({ info: document.info, properties: documentOptions && typeof documentOptions === 'object' && 'properties' in documentOptions ? documentOptions.properties : {} }, null, 2)}\n`,
    [join(CLIENT_SOURCES, 'schema.d.ts')]: `${COMMENT_HEADER.replace('openapi-typescript.', 'openapi-typescript from GET /v1/openapi.json: npm run generate:client.')}${astToString(nodes)}`,
  };
}

if (import.meta.main) {
  for (const [path, text] of Object.entries(await generatedClientFiles())) {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}
