import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedClientFiles } from '../../bin/generate-client.ts';

const generated = Object.entries(await generatedClientFiles()).map(([path, text]) => [relative(process.cwd(), path), path, text] as const);

describe('the typed client package', () => {
  it.each(generated)('%s is what npm run generate:client writes from the current schemas', (_name, path, text) => {
    // Act
    const checkedIn = readFileSync(path, 'utf8');

    // Assess: a schema changed without regenerating the client (run npm run generate:client).
    expect(checkedIn === text, 'out of date: run npm run generate:client').toBe(true);
  });
});
