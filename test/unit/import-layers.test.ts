/**
 * Imports point down: every module of lib/ and functions/ stands on a layer, and imports only from
 * its own folder (or file) and from layers below its own. So the renderer never learns about the
 * API, a store never about jobs, and a change high up never ripples down.
 *
 * Read with TypeScript's own parser (static imports, `import type`, `export ... from` and dynamic
 * `import()` alike), so the rule is the code's, not a picture's.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');

/**
 * The layers, from the ground up. A folder ends with '/', a loose file is named whole. Modules of
 * one layer do not import each other; each may import any layer below.
 */
const LAYERS: readonly (readonly string[])[] = [
  // What everything may use, and which uses nothing of ours: ids, limits, logs, the network policy.
  ['lib/random.ts', 'lib/json-depth.ts', 'lib/secrets.ts', 'lib/observability/', 'lib/egress/'],
  ['lib/settings.ts'],
  // One document in, one PDF out; the stored records and objects.
  ['lib/render/', 'lib/storage/'],
  // API keys, tiers and counters; the template engine (pure: text and data in, HTML out); signatures
  // (certificates, CMS, a PDF's signed update, signing keys' records and KMS calls through a port).
  ['lib/accounts/', 'lib/templates/', 'lib/signatures/'],
  // Customer code (templates, data schemas) run in bounded worker threads, shared per key.
  ['lib/customer-code/'],
  // Documents as requested (options, sources, batches, merges, stored templates); webhooks.
  ['lib/documents/', 'lib/webhooks/'],
  // The AWS wiring of the stores and invokers.
  ['lib/aws/'],
  // HTTP: routes, schemas, errors, middlewares, views.
  ['lib/api/'],
  // Asynchronous jobs (they run API requests later); the site's pages.
  ['lib/jobs/', 'lib/site/'],
  // Bulk jobs: a job kind built on jobs.
  ['lib/bulk/'],
  // The Lambda handlers: composition roots.
  ['functions/'],
  // What runs the handlers (the local stack) or deploys them (the CDK app).
  ['lib/local/', 'cdk/'],
  // Tools: the keys CLI and the bench start a local stack or synthesize the stack.
  ['bin/', 'bench/'],
];

/**
 * Imports that still run up, each with why it is allowed for now. Nothing may be added here to let
 * a new one through: move the shared piece below both, or pass it in from a composition root.
 */
const STILL_RUNNING_UP: ReadonlyMap<string, string> = new Map([
  [
    'lib/api/earlier-runs.ts -> lib/jobs/job-records.ts',
    'an idempotent replay of an async request reads its job: job records belong below lib/api, beside the other stored records',
  ],
]);

/** The part of LAYERS a path belongs to, and its layer; undefined for paths outside them (tests, packages). */
function placeOf(path: string): { readonly unit: string; readonly layer: number } | undefined {
  let best: { unit: string; layer: number } | undefined;
  LAYERS.forEach((units, layer) => {
    for (const unit of units) {
      const within = unit.endsWith('/') ? path.startsWith(unit) : path === unit;
      if (within && (!best || unit.length > best.unit.length)) best = { unit, layer };
    }
  });
  return best;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .filter((path) => !path.split('/').includes('node_modules') && !path.includes('/cdk.out'));
}

/** The project file an import names (package.json "imports" aliases and relative paths), or undefined for a package. */
function importedPath(from: string, specifier: string): string | undefined {
  if (specifier.startsWith('#lib/')) return 'lib/' + specifier.slice('#lib/'.length);
  if (specifier.startsWith('#functions/')) return 'functions/' + specifier.slice('#functions/'.length);
  if (specifier.startsWith('.')) return normalize(join(dirname(from), specifier));
  return undefined;
}

/** Every import of a file, as `from -> to` with both paths from the project's root. */
function importsOf(path: string): { readonly to: string; readonly line: string }[] {
  const info = ts.preProcessFile(readFileSync(join(ROOT, path), 'utf8'), true, true);
  return info.importedFiles.flatMap(({ fileName }) => {
    const to = importedPath(path, fileName);
    return to === undefined ? [] : [{ to, line: `${path} -> ${to}` }];
  });
}

const files = ['lib', 'functions', 'cdk', 'bin', 'bench'].flatMap(sourceFiles);

describe('imports point down', () => {
  it('every module of lib/ and functions/ stands on a layer', () => {
    // Assess: a new folder is placed in LAYERS, where its imports say it belongs.
    const unplaced = files.filter((path) => placeOf(path) === undefined);
    expect(unplaced).toEqual([]);
  });

  it('no module imports from its own layer or one above (outside its own folder)', () => {
    // Act
    const upward = files.flatMap((path) => {
      const from = placeOf(path)!;
      return importsOf(path).filter(({ to, line }) => {
        const target = placeOf(to);
        if (!target || target.unit === from.unit || STILL_RUNNING_UP.has(line)) return false;
        return target.layer >= from.layer;
      });
    });

    // Assess: each line names the import to remove (move the shared piece down, or pass it in).
    expect(upward.map(({ line }) => line)).toEqual([]);
  });

  it('the issue\u2019s rule: render, egress, storage and accounts import nothing from the API, jobs, documents or the handlers', () => {
    const low = ['lib/render/', 'lib/egress/', 'lib/storage/', 'lib/accounts/'];
    const high = ['lib/api/', 'lib/jobs/', 'lib/bulk/', 'lib/documents/', 'functions/'];
    const offending = files
      .filter((path) => low.some((dir) => path.startsWith(dir)))
      .flatMap(importsOf)
      .filter(({ to }) => high.some((dir) => to.startsWith(dir)))
      .map(({ line }) => line);
    expect(offending).toEqual([]);
  });

  it('each import still running up is still there (else strike it from the list)', () => {
    const all = new Set(files.flatMap(importsOf).map(({ line }) => line));
    expect([...STILL_RUNNING_UP.keys()].filter((line) => !all.has(line))).toEqual([]);
  });
});
