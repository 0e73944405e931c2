/**
 * `npm run build:packages` (also run by `npm ci`, through `prepare`): builds the two packages a
 * customer installs from their TypeScript sources.
 * - packages/client/dist: ESM JavaScript and .d.ts per source file (tsc), with the generated
 *   schema.d.ts and openapi.json beside them. `fetch` only, no dependency: Node 18+, Deno, Bun,
 *   edge runtimes and browsers.
 * - packages/cli/dist/pdfapi.js: one ESM file (esbuild) holding the CLI, the client and its
 *   dependencies, so `pdfapi` starts without resolving and reading hundreds of modules.
 * `node packages/build.ts cli` builds the CLI only (the integration tests' global setup does, so
 * the tests run what the sources say now).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CLIENT = `${ROOT}packages/client/`;
const CLI = `${ROOT}packages/cli/`;

/** The oldest Node the packages run on (their `engines`). */
const NODE_TARGET = 'node18';

export async function buildClient(): Promise<void> {
  await rm(`${CLIENT}dist`, { recursive: true, force: true });
  try {
    await promisify(execFile)(process.execPath, [`${ROOT}node_modules/typescript/bin/tsc`, '-p', `${CLIENT}tsconfig.build.json`], { cwd: ROOT });
  } catch (error) {
    throw new Error(`tsc could not build the client:\n${(error as { stdout?: string }).stdout ?? String(error)}`);
  }
  // The declarations import the generated types as './schema.js' (resolved to schema.d.ts), the
  // specifier every moduleResolution a customer may use accepts; './schema.d.ts' is not.
  for (const name of await readdir(`${CLIENT}dist`)) {
    if (!name.endsWith('.d.ts')) continue;
    const path = `${CLIENT}dist/${name}`;
    await writeFile(path, (await readFile(path, 'utf8')).replaceAll("from './schema.d.ts'", "from './schema.js'"));
  }
  // tsc leaves hand-written or generated declaration files and JSON where they are.
  await copyFile(`${CLIENT}src/schema.d.ts`, `${CLIENT}dist/schema.d.ts`);
  await copyFile(`${CLIENT}src/openapi.json`, `${CLIENT}dist/openapi.json`);
}

export async function buildCli(): Promise<void> {
  await mkdir(`${CLI}dist`, { recursive: true });
  const { outputFiles } = await build({
    entryPoints: [`${CLI}src/main.ts`],
    outfile: `${CLI}dist/pdfapi.js`,
    // Written below, whole: a test running the CLI while another test rebuilds it never reads half a file.
    write: false,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: NODE_TARGET,
    minify: true,
    legalComments: 'eof',
    logLevel: 'warning',
    // commander and cli-progress are CommonJS and require Node's modules: an ESM bundle needs a require.
    banner: { js: "import { createRequire as __pdfapiRequire } from 'node:module'; const require = __pdfapiRequire(import.meta.url);" },
  });
  for (const file of outputFiles) {
    const partial = `${file.path}.${process.pid}.partial`;
    await writeFile(partial, file.contents);
    await rename(partial, file.path);
  }
}

export interface Packed {
  readonly name: string;
  readonly version: string;
  readonly filename: string;
  readonly files: readonly { readonly path: string }[];
}

/**
 * Builds both packages, packs them into `destination` as `npm pack` does for a publish, and installs
 * the two tarballs into a fresh project there (`destination/project`, its own package.json): what
 * a customer gets. The packages have no dependency, so the install needs no registry.
 */
export async function packAndInstall(destination: string): Promise<{ project: string; packed: Record<'client' | 'cli', Packed> }> {
  await Promise.all([buildClient(), buildCli()]);
  const run = promisify(execFile);
  const packed = {} as Record<'client' | 'cli', Packed>;
  for (const name of ['client', 'cli'] as const) {
    // Built just above; --ignore-scripts spares prepack's second build.
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], { cwd: `${ROOT}packages/${name}` });
    packed[name] = (JSON.parse(stdout) as Packed[])[0]!;
  }
  const project = `${destination}/project`;
  await mkdir(project, { recursive: true });
  await writeFile(`${project}/package.json`, `${JSON.stringify({ name: 'customer', version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`);
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', `${destination}/${packed.client.filename}`, `${destination}/${packed.cli.filename}`], { cwd: project });
  return { project, packed };
}

if (import.meta.main) {
  const which = process.argv[2];
  if (which !== 'cli') await buildClient();
  if (which !== 'client') await buildCli();
}
