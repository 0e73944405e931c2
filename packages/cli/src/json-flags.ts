/**
 * Flags that take JSON (`--options`, `--schema`, `--sample`, `--data`, `--margin`, …) take it the
 * three ways people try: inline (`--options '{"format":"A5"}'`), a path (`--options options.json`)
 * or curl's `@path` (`--options @options.json`); `-` is standard input. What cannot be read or
 * parsed is an error naming the flag and the three ways.
 */
import { readFileSync } from 'node:fs';

export class JsonFlagError extends Error {}

/** The text a JSON flag's value stands for: itself when it looks like JSON, else the file it names. */
function jsonText(value: string, flag: string, stdin: () => string): { text: string; from: string } {
  if (value === '-') return { text: stdin(), from: 'standard input' };
  const path = value.startsWith('@') ? value.slice(1) : value;
  const inline = /^\s*[[{"]/.test(value) || /^\s*(-?\d|true\b|false\b|null\b)/.test(value);
  if (inline && !value.startsWith('@')) return { text: value, from: 'the inline value' };
  try {
    // Sync on purpose: commander's argument parsers are synchronous, and these files are small.
    return { text: readFileSync(path, 'utf8'), from: path };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a directory' : (code ?? String(error));
    throw new JsonFlagError(`${flag}: cannot read ${path} (${why}); give inline JSON, a file, or @file`);
  }
}

/** A JSON flag's value parsed; `object` requires a JSON object. */
export function parseJsonFlag(value: string, flag: string, options: { object: true; stdin?: () => string }): Record<string, unknown>;
export function parseJsonFlag(value: string, flag: string, options?: { object?: false; stdin?: () => string }): unknown;
export function parseJsonFlag(value: string, flag: string, { object = false, stdin = () => readFileSync(0, 'utf8') }: { object?: boolean; stdin?: () => string } = {}): unknown {
  const { text, from } = jsonText(value, flag, stdin);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new JsonFlagError(`${flag}: ${from} is not JSON (${(error as Error).message}); give inline JSON, a file, or @file`);
  }
  if (object && (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))) throw new JsonFlagError(`${flag}: ${from} must be a JSON object ({…})`);
  return parsed;
}

/** The same, for the commands' actions (standard input read as a stream, so a pipe works). */
export async function readJsonFlag(value: string, flag: string, options: { object: true }): Promise<Record<string, unknown>>;
export async function readJsonFlag(value: string, flag: string, options?: { object?: false }): Promise<unknown>;
export async function readJsonFlag(value: string, flag: string, { object = false }: { object?: boolean } = {}): Promise<unknown> {
  const input = value === '-' ? await readStdin() : '';
  return object ? parseJsonFlag(value, flag, { object: true, stdin: () => input }) : parseJsonFlag(value, flag, { stdin: () => input });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
