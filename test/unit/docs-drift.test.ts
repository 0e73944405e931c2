/**
 * docs/options.md is generated from the schemas that validate requests (bin/generate-docs.ts), so
 * no option is described by hand twice: a schema's words changed without regenerating fail here.
 * So are the generated parts of docs/api.md (the error tables, from the catalogues the API answers
 * from) and docs/deploying.md (what the stack creates, from the synthesized template).
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedDocs } from '../../bin/generate-docs.ts';

const generated = Object.entries(generatedDocs()).map(([path, text]) => [relative(process.cwd(), path), path, text] as const);

describe('the generated docs', () => {
  it.each(generated)('%s is what npm run generate:docs writes from the current schemas', (_name, path, text) => {
    // Act
    const checkedIn = readFileSync(path, 'utf8');

    // Assess: a schema's description, default, range or example changed (run npm run generate:docs).
    expect(checkedIn === text, 'out of date: run npm run generate:docs').toBe(true);
  });

  it('names every field of a generate request, each with the words its schema gives', () => {
    const reference = generated[0]![2];
    for (const field of ['format', 'margin', 'page_ranges', 'watermark', 'encryption', 'filename', 'http_headers', 'async', 'webhook_url']) {
      expect(reference).toMatch(new RegExp(`^\\| \`${field}\` \\|`, 'm'));
    }
  });
});
