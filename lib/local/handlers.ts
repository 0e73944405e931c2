/**
 * The Lambda handlers the local stack serves, by function name: the very modules each Lambda
 * function is bundled from.
 */
import type { FunctionName } from '#lib/api/routes.ts';
import { handler as fallback } from '#functions/fallback.ts';
import { handler as files } from '#functions/files.ts';
import { handler as generate } from '#functions/generate.ts';
import { handler as health } from '#functions/health.ts';
import { handler as pdfs } from '#functions/pdfs.ts';
import { handler as usage } from '#functions/usage.ts';
import type { ProxyHandler } from './gateway.ts';

export const API_HANDLERS: Readonly<Record<FunctionName, ProxyHandler>> = {
  fallback,
  files,
  generate,
  health,
  pdfs,
  usage,
};
