/**
 * `encryption` (shared/spec/beyond.md): AES-256 with the PDF 2.0 standard security handler (V 5,
 * R 6), by qpdf compiled to WebAssembly (@neslinesli93/qpdf-wasm, qpdf 12).
 *
 * Chosen after trying the alternatives on Chromium's own PDFs, read back with pdf.js and poppler:
 * @cantoo/pdf-lib writes V5/R6 but leaves strings (the title, link targets, bookmarks, the
 * catalog's /Lang) unencrypted, which readers then decrypt to garbage; pdfcpu's wasm writes the
 * deprecated R 5 with a malformed /P and took 4 s on a 300-page file; muhammara needs a compiler
 * to install. qpdf encrypts every string and stream, keeps tags, links and bookmarks, and took
 * 20 to 40 ms for an invoice and 0.2 to 0.3 s for a 300-page, 2.7 MB report.
 *
 * Kept out of the Lambda bundles and shipped in the Chromium layer (cdk/constructs/chromium-layer.ts),
 * since it loads its .wasm from beside its own code. One qpdf instance serves the process (starting one costs 20 to 40 ms); a call runs synchronously
 * on its own in-memory file system, so calls never overlap. An instance that failed is dropped.
 */
import { createRequire } from 'node:module';
import createQpdf from '@neslinesli93/qpdf-wasm';
import type { Finishing, Permission } from './finishing-options.ts';

type Encryption = NonNullable<Finishing['encryption']>;

/** The part of the Emscripten module used here (the package's own types declare less of its file system). */
interface Qpdf {
  callMain(args: string[]): number;
  readonly FS: {
    writeFile(path: string, data: Uint8Array): void;
    readFile(path: string): Uint8Array;
    unlink(path: string): void;
  };
}

const require = createRequire(import.meta.url);
let instance: Promise<Qpdf> | undefined;

function qpdf(): Promise<Qpdf> {
  instance ??= createQpdf({ locateFile: () => require.resolve('@neslinesli93/qpdf-wasm/dist/qpdf.wasm') }) as unknown as Promise<Qpdf>;
  return instance;
}

/**
 * qpdf's switches for each permission the API names; everything not granted is refused. Modifying
 * includes assembling (inserting, turning, removing pages); annotating includes filling in forms.
 */
const SWITCHES: Record<Permission, { granted: string[]; refused: string[] }> = {
  print: { granted: ['--print=full'], refused: ['--print=none'] },
  copy: { granted: ['--extract=y'], refused: ['--extract=n'] },
  modify: { granted: ['--modify-other=y', '--assemble=y'], refused: ['--modify-other=n', '--assemble=n'] },
  annotate: { granted: ['--annotate=y', '--form=y'], refused: ['--annotate=n', '--form=n'] },
};

/** qpdf's exit codes: 0 done, 3 done with warnings, 2 failed. */
const DONE = new Set([0, 3]);

let calls = 0;

export async function encryptPdf(pdf: Uint8Array, encryption: Encryption): Promise<Uint8Array> {
  const q = await qpdf();
  const name = `/${process.pid}-${++calls}`;
  const [input, output] = [`${name}-in.pdf`, `${name}-out.pdf`];
  const permissions = (Object.keys(SWITCHES) as Permission[]).flatMap((permission) =>
    encryption.permissions.has(permission) ? SWITCHES[permission].granted : SWITCHES[permission].refused,
  );
  try {
    q.FS.writeFile(input, pdf);
    const code = q.callMain([
      '--no-warn',
      // Object streams make the encrypted file about 40 % smaller than Chromium's own.
      '--object-streams=generate',
      input,
      '--encrypt',
      `--user-password=${encryption.userPassword}`,
      `--owner-password=${encryption.ownerPassword}`,
      '--bits=256',
      ...permissions,
      '--',
      output,
    ]);
    if (!DONE.has(code)) throw new Error(`qpdf could not encrypt the PDF (exit code ${code})`);
    return q.FS.readFile(output);
  } catch (error) {
    instance = undefined;
    throw error;
  } finally {
    for (const path of [input, output]) {
      try {
        q.FS.unlink(path);
      } catch {
        // never written
      }
    }
  }
}
