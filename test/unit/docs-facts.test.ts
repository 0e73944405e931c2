/**
 * What the docs say the code defines, checked against the code, where the docs keep words of their
 * own and so are not generated (the generated parts: docs-drift.test.ts). A route, a setting, a CDK
 * switch, an events/ file, a CLI command or an error code added, renamed or removed in the code
 * without the docs fails here, naming it; and so does a doc naming one the code does not have.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_ERRORS } from '#lib/api/errors.ts';
import { API_FUNCTIONS, INTERNAL_FUNCTIONS, ROUTES } from '#lib/api/routes.ts';
import { BATCH_ITEM_ERRORS } from '#lib/documents/batch.ts';
import { CONCURRENCY_SWITCHES } from '../../cdk/constructs/concurrency.ts';
import { functionId } from '../../cdk/constructs/service-function.ts';

const ROOT = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const DOC_PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** The lines of a page's section, from its heading to the next heading of the same level or above. */
function section(page: string, heading: string): string {
  const lines = read(page).split('\n');
  const start = lines.findIndex((line) => /^#+ /.test(line) && line.replace(/^#+ /, '') === heading);
  if (start < 0) throw new Error(`${page}: no heading "${heading}"`);
  const level = /^#+/.exec(lines[start]!)![0].length;
  const end = lines.findIndex((line, index) => index > start && new RegExp(`^#{1,${level}} `).test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The rows of every Markdown table in a text, as cells (the header and separator rows left out). */
function tableRows(text: string): string[][] {
  const rows: string[][] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (!line.startsWith('|') || /^\|[-| :]+\|$/.test(line) || /^\|[-| :]+\|$/.test(lines[index + 1] ?? '')) continue;
    rows.push(line.slice(1, -1).split(/(?<!\\)\|/).map((cell) => cell.trim()));
  }
  return rows;
}

/** The backticked pieces of a cell: `` `GET /v1/pdf` `` -> `GET /v1/pdf`. */
const inCode = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);

/** Every file of the folders whose name ends as given. */
function sourceFiles(folders: readonly string[], extension = /\.ts$/): string[] {
  return folders.flatMap((folder) =>
    readdirSync(join(ROOT, folder), { recursive: true, encoding: 'utf8' })
      .filter((name) => extension.test(name) && !name.includes('node_modules'))
      .map((name) => join(folder, name))
      .filter((path) => statSync(join(ROOT, path)).isFile()),
  );
}

describe('docs/api.md, the API summary', () => {
  const rows = tableRows(section('docs/api.md', 'API summary'));
  const documented = rows.flatMap(([endpoints]) => inCode(endpoints!).map((text) => text.replace(/\?.*$/, '')));

  it('lists every route of lib/api/routes.ts, and no other', () => {
    const routes = ROUTES.map((route) => `${route.method} ${route.path}`);
    expect(routes.filter((route) => !documented.includes(route)), 'routes the table lacks').toEqual([]);
    expect(documented.filter((endpoint) => !routes.includes(endpoint)), 'endpoints no route serves').toEqual([]);
  });
});

describe('docs/operating.md, Configuration', () => {
  const rows = tableRows(section('docs/operating.md', 'Configuration'));
  const documented = new Map(rows.flatMap(([names, byDefault]) => inCode(names!).filter((name) => /^[A-Z][A-Z0-9_]+$/.test(name)).map((name, index) => [name, { byDefault: byDefault!, index }] as const)));

  /** Every variable the code reads (not only sets), with the files it is read in. */
  const read_ = new Map<string, Set<string>>();
  const literalDefaults = new Map<string, number>();
  for (const path of sourceFiles(['lib', 'functions', 'bin', 'cdk'])) {
    const text = read(path);
    const add = (name: string) => read_.set(name, (read_.get(name) ?? new Set()).add(path));
    // process.env.NAME, but not an assignment to it (`process.env.NAME = ...`; `??=` reads it first).
    for (const [, name] of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)\b(?!\s*=[^=])/g)) add(name!);
    // The settings' readers (lib/settings.ts) and the SDK clients' endpoints (lib/aws/clients.ts).
    for (const [, name] of text.matchAll(/\b(?:intFromEnv|required|oncePerEndpoint)\('([A-Z][A-Z0-9_]*)'/g)) add(name!);
    // A secret arrives as <NAME>_ARN and is read into <NAME> (lib/secrets.ts).
    for (const [, list] of text.matchAll(/resolveSecretArns\(\[([^\]]*)\]/g)) {
      for (const [, name] of list!.matchAll(/'([A-Z][A-Z0-9_]*)'/g)) add(name!), add(`${name}_ARN`);
    }
    for (const [, name, value] of text.matchAll(/\bintFromEnv\('([A-Z][A-Z0-9_]*)', ([\d_ *]+)[,)]/g)) {
      literalDefaults.set(name!, value!.split('*').reduce((product, factor) => product * Number(factor.trim().replaceAll('_', '')), 1));
    }
  }

  it('documents every environment variable lib/, functions/, bin/ and cdk/ read', () => {
    // Assess: at least the ones this test was written against, so a broken scan cannot pass.
    expect([...read_.keys()]).toEqual(expect.arrayContaining(['RENDER_TIMEOUT_MS', 'BULK_MAXIMUM_CONCURRENCY', 'LINK_SIGNING_SECRET_ARN', 'AWS_ENDPOINT_URL_SQS', 'DATA_DIR']));
    const missing = [...read_].filter(([name]) => !documented.has(name)).map(([name, files]) => `${name} (read in ${[...files].join(', ')})`);
    expect(missing, 'read by the code, missing from the tables').toEqual([]);
  });

  it('documents no variable that nothing reads (our code, or the library the row names)', () => {
    // Powertools reads its own switches; their names are in its code.
    const powertools = join(ROOT, 'node_modules/@aws-lambda-powertools');
    const readByPowertools = (name: string) => {
      try {
        execFileSync('grep', ['-rqF', '--include=*.js', name, powertools]);
        return true;
      } catch {
        return false;
      }
    };
    const unread = [...documented.keys()].filter((name) => !read_.has(name) && !readByPowertools(name));
    expect(unread).toEqual([]);
  });

  it('gives each number default as the code has it', () => {
    expect(literalDefaults.size).toBeGreaterThan(15);
    const wrong = [...literalDefaults]
      .filter(([name]) => documented.has(name))
      .filter(([name, value]) => {
        const { byDefault } = documented.get(name)!;
        return !inCode(byDefault).some((text) => Number(text) === value);
      })
      .map(([name, value]) => `${name}: the code's default is ${value}, the table says ${documented.get(name)!.byDefault}`);
    expect(wrong).toEqual([]);
  });
});

describe('docs/deploying.md', () => {
  it('lists every CDK switch the stack reads, with the default the code gives, and no other', () => {
    // Switches are read with contextFlag/contextInt/contextString (cdk/stack.ts) and CONCURRENCY_SWITCHES.
    const stack = read('cdk/stack.ts');
    const defaults = new Map<string, string | undefined>();
    for (const [, name, fallback] of stack.matchAll(/\bcontext(?:Flag|Int|String)\(node, '(\w+)'(?:, ([\w_]+))?\)/g)) defaults.set(name!, fallback?.replaceAll('_', ''));
    for (const name of Object.keys(CONCURRENCY_SWITCHES)) defaults.set(name, undefined);
    expect(defaults.has('bulkMaximumConcurrency')).toBe(true);

    const rows = tableRows(section('docs/deploying.md', 'Deploy')).filter(([head]) => head !== 'Context');
    const documented = new Map(rows.flatMap(([names, byDefault]) => inCode(names!).map((name, index) => [name, inCode(byDefault!)[index]] as const)));
    expect([...defaults.keys()].filter((name) => !documented.has(name)), 'switches the table lacks').toEqual([]);
    expect([...documented.keys()].filter((name) => !defaults.has(name)), 'switches the stack does not read').toEqual([]);
    const wrong = [...defaults].filter(([name, fallback]) => fallback !== undefined && documented.get(name) !== fallback);
    expect(wrong, 'defaults unlike the code').toEqual([]);
  });

  it('gives every file of events/ a row naming the function it is for, and names no other', () => {
    const rows = tableRows(section('docs/deploying.md', 'Invoking one function locally with SAM')).filter(([, event]) => event?.startsWith('`events/'));
    const functionIds = new Set([...API_FUNCTIONS, ...INTERNAL_FUNCTIONS].map(functionId));
    const events = readdirSync(join(ROOT, 'events')).filter((name) => name.endsWith('.json'));

    const documented = rows.map(([fn, event]) => ({ fn: inCode(fn!)[0]!, event: inCode(event!)[0]!.replace(/^events\//, '') }));
    expect(events.filter((event) => !documented.some((row) => row.event === event)), 'events without a row').toEqual([]);
    expect(documented.filter((row) => !events.includes(row.event)).map((row) => row.event), 'rows without an event').toEqual([]);
    // events/<function>.json, or events/<function>-<what>.json, for the function the row names.
    const wrong = documented.filter((row) => !functionIds.has(row.fn) || row.fn !== functionId(row.event.replace(/(-.*)?\.json$/, '') as never));
    expect(wrong).toEqual([]);
  });
});

describe('docs/api.md, the CLI', () => {
  it('names every command of pdfapi --help', () => {
    const help = execFileSync(process.execPath, [join(ROOT, 'packages/cli/src/main.ts'), '--help'], { encoding: 'utf8', env: { ...process.env, PDFAPI_KEY: '' } });
    const commands = [...help.slice(help.indexOf('Commands:')).matchAll(/^ {2}([a-z]+)\b/gm)].map((match) => match[1]!).filter((name) => name !== 'help');
    expect(commands.length).toBeGreaterThan(8);
    const paragraph = read('docs/api.md').slice(read('docs/api.md').indexOf('**The CLI, `pdfapi`**'));
    expect(commands.filter((name) => !new RegExp('`' + name + '\\b').test(paragraph))).toEqual([]);
  });
});

describe('error codes named in the docs', () => {
  it('every "<status> `code`" is a code of lib/api/errors.ts with that status', () => {
    const wrong = DOC_PAGES.flatMap((page) =>
      [...read(page).matchAll(/\b([1-5]\d\d),? `([a-z][a-z_]+)`/g)]
        .filter(([, status, code]) => API_ERRORS[code as keyof typeof API_ERRORS]?.status !== Number(status))
        .map(([text]) => `${page}: ${text}`),
    );
    expect(wrong).toEqual([]);
  });

  it('every batch item code named is one of lib/documents/batch.ts', () => {
    const wrong = DOC_PAGES.flatMap((page) =>
      [...read(page).matchAll(/\b(?:item|batch):? `([A-Z][A-Z_]+)`/g)].filter(([, code]) => !Object.hasOwn(BATCH_ITEM_ERRORS, code!)).map(([text]) => `${page}: ${text}`),
    );
    expect(wrong).toEqual([]);
  });

  it('every API error code appears in docs/api.md', () => {
    const api = read('docs/api.md');
    expect(Object.keys(API_ERRORS).filter((code) => !api.includes('`' + code + '`'))).toEqual([]);
  });
});
