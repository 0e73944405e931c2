/**
 * Unpacking Chromium on a cold start, the largest part of one: @sparticuz/chromium ships the
 * browser brotli-compressed and unpacks it into /tmp on first use, 1.2 s of one core. The Lambda
 * layer carries it repacked with zstd instead (cdk/constructs/chromium-layer.ts checks the repack
 * gives back the same bytes), which Node 24 unpacks in about 0.4 s: the same browser, sooner.
 * Where there is no repack (a local install of the package as shipped), the package unpacks its
 * own files, as before.
 */
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createZstdDecompress } from 'node:zlib';
import chromium, { inflate } from '@sparticuz/chromium';
import { PACKED_CHROMIUM_FILE } from './chromium-packing.ts';

/** The package's `bin/` directory, wherever it was installed (the layer, on Lambda: found through NODE_PATH). */
function chromiumBinDir(): string {
  return join(dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')), '..', 'bin');
}

/**
 * The path of the Chromium executable, unpacked into /tmp if it is not there yet (once per
 * execution environment), with the fonts, the graphics and the system libraries it needs.
 */
export async function chromiumExecutablePath(): Promise<string> {
  const bin = chromiumBinDir();
  const packed = join(bin, PACKED_CHROMIUM_FILE);
  const executable = join(tmpdir(), 'chromium');
  if (!existsSync(packed) || existsSync(executable)) return chromium.executablePath();
  // What @sparticuz/chromium's executablePath() unpacks, the browser from zstd and the rest as shipped
  // (small archives, tens of milliseconds). Only the layer has the repack, and only Lambda's
  // Amazon Linux 2023 runtimes have the layer, so its libraries are always wanted here.
  await Promise.all([
    unpackZstd(packed, executable),
    inflate(join(bin, 'fonts.tar.br')),
    inflate(join(bin, 'swiftshader.tar.br')),
    inflate(join(bin, 'al2023.tar.br')),
  ]);
  return executable;
}

/** Unpacks under a temporary name, then renames: a run cut short never leaves a partial browser to find. */
async function unpackZstd(source: string, target: string): Promise<void> {
  const partial = `${target}.partial-${process.pid}`;
  try {
    await pipeline(createReadStream(source, { highWaterMark: 2 ** 22 }), createZstdDecompress({ chunkSize: 2 ** 21 }), createWriteStream(partial, { mode: 0o700 }));
    await rename(partial, target);
  } finally {
    await rm(partial, { force: true });
  }
}
