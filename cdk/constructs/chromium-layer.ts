/**
 * @sparticuz/chromium as a Lambda layer, built offline from the installed node_modules.
 *
 * The package cannot be bundled: it finds its brotli-compressed browser, fonts and libraries
 * (`bin/*.br`) next to its own code, and decompresses them into /tmp on first use. So the Chromium
 * functions' bundles keep it external, and this layer ships it in the `nodejs/node_modules` layout
 * Lambda puts on the module path, together with its runtime dependencies (tar-fs and friends), as
 * npm installed them. No Docker and no network: synth copies what `npm ci` already put on disk.
 *
 * One change to the package: the browser itself (`bin/chromium.br`, 209 MB unpacked) is repacked
 * with zstd, which unpacks it on a cold start in about a third of brotli's time
 * (lib/render/chromium-unpack.ts); the repack is checked to give back the very same bytes.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { brotliDecompressSync, constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { dirname, join, relative, sep } from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Architecture, Code, LayerVersion, type Runtime } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { PACKED_CHROMIUM_FILE } from '#lib/render/chromium-packing.ts';
import { CHROMIUM_PACKAGE, LAYER_PACKAGES, QPDF_PACKAGE } from '../layer-packages.ts';

/** What the layer carries (../layer-packages.ts), for the functions that render; their bundles keep these external. */
export { CHROMIUM_PACKAGE, LAYER_PACKAGES, QPDF_PACKAGE } from '../layer-packages.ts';

/** One installed package of the layer's dependency closure. */
export interface InstalledPackage {
  readonly name: string;
  readonly version: string;
  /** Its directory on disk. */
  readonly dir: string;
  /** Where it goes inside the layer: `nodejs/node_modules/...`, mirroring npm's layout. */
  readonly layerPath: string;
}

interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
}

/** Node's lookup: the nearest `node_modules/<name>` from `fromDir` upwards. */
function findInstalled(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * The package and every package it needs at run time (dependencies, plus optional dependencies
 * that are installed), resolved the way Node resolves them from the project root.
 */
export function dependencyClosure(name: string, projectRoot: string): InstalledPackage[] {
  const found = new Map<string, InstalledPackage>();
  const visit = (wanted: string, fromDir: string, optional: boolean) => {
    const dir = findInstalled(wanted, fromDir);
    if (!dir) {
      if (optional) return;
      throw new Error(`${wanted} is not installed (needed by the Chromium layer); run npm ci first`);
    }
    if (found.has(dir)) return;
    const inProject = relative(projectRoot, dir);
    if (inProject.startsWith('..')) throw new Error(`${wanted} resolves outside the project (${dir})`);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;
    found.set(dir, { name: pkg.name, version: pkg.version, dir, layerPath: join('nodejs', inProject) });
    for (const dependency of Object.keys(pkg.dependencies ?? {})) visit(dependency, dir, false);
    for (const dependency of Object.keys(pkg.optionalDependencies ?? {})) visit(dependency, dir, true);
  };
  visit(name, projectRoot, false);
  return [...found.values()];
}

/**
 * zstd level of the repacked browser: 79 MB (brotli's is 67 MB) for 3.7 s of packing at synth;
 * higher levels save under 2 MB for many times the packing time, and unpack no faster.
 */
const PACKED_CHROMIUM_LEVEL = 9;
/** What the repack is, for the asset's hash: another repack is another layer. */
const PACKING = `${PACKED_CHROMIUM_FILE} zstd-${PACKED_CHROMIUM_LEVEL}`;

/** Copies the closure into a layer directory; nested node_modules are copied as their own entries. */
export function writeLayer(outputDir: string, packages: readonly InstalledPackage[]): void {
  for (const pkg of packages) {
    cpSync(pkg.dir, join(outputDir, pkg.layerPath), {
      recursive: true,
      dereference: true,
      filter: (source) => !relative(pkg.dir, source).split(sep).includes('node_modules'),
    });
    if (pkg.name === CHROMIUM_PACKAGE) repackChromium(join(outputDir, pkg.layerPath, 'bin'));
  }
}

/** Replaces `chromium.br` by `chromium.zst`, after checking the zstd file unpacks to the same bytes. */
export function repackChromium(binDir: string): void {
  const browser = brotliDecompressSync(readFileSync(join(binDir, 'chromium.br')));
  const packed = zstdCompressSync(browser, { params: { [constants.ZSTD_c_compressionLevel]: PACKED_CHROMIUM_LEVEL } });
  if (!zstdDecompressSync(packed).equals(browser)) throw new Error('repacking Chromium with zstd did not give back the same bytes');
  writeFileSync(join(binDir, PACKED_CHROMIUM_FILE), packed);
  rmSync(join(binDir, 'chromium.br'));
}

export interface ChromiumLayerProps {
  /** The directory holding package.json and node_modules. */
  readonly projectRoot: string;
  readonly runtime: Runtime;
}

export class ChromiumLayer extends Construct {
  readonly layer: LayerVersion;
  /** The @sparticuz/chromium version shipped (Chromium's major version). */
  readonly version: string;
  readonly packages: readonly InstalledPackage[];

  constructor(scope: Construct, id: string, props: ChromiumLayerProps) {
    super(scope, id);
    const closures = LAYER_PACKAGES.map((name) => dependencyClosure(name, props.projectRoot));
    this.packages = [...new Map(closures.flat().map((pkg) => [pkg.dir, pkg])).values()];
    const chromium = closures[0]?.[0] as InstalledPackage;
    this.version = chromium.version;
    const packages = this.packages;

    // The packages' names, versions and places decide the content, so they are the asset's hash:
    // no 67 MB fingerprint on every synth, and an unchanged layer is not uploaded again.
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([PACKING, ...packages.map(({ layerPath, version }) => [layerPath, version]).sort()]))
      .digest('hex');

    this.layer = new LayerVersion(this, 'Layer', {
      description: `${CHROMIUM_PACKAGE} ${this.version}, ${QPDF_PACKAGE} and their dependencies, in nodejs/node_modules`,
      compatibleRuntimes: [props.runtime],
      // The package's binaries are built for x86_64.
      compatibleArchitectures: [Architecture.X86_64],
      code: Code.fromAsset(chromium.dir, {
        assetHash: fingerprint,
        assetHashType: AssetHashType.CUSTOM,
        bundling: {
          // Never pulled: local bundling below always succeeds, so Docker is never needed.
          image: DockerImage.fromRegistry('scratch'),
          local: {
            tryBundle(outputDir: string): boolean {
              writeLayer(outputDir, packages);
              return true;
            },
          },
        },
      }),
    });
  }
}
