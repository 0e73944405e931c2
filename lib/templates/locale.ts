/** Locales for the template engine's formatting filters. */

/** The locale when neither the render options nor the html's `<html lang>` name one. */
export const DEFAULT_LOCALE = 'en-US';

/** `locale` canonicalized (`de-de` → `de-DE`), or undefined when it is not a well-formed BCP 47 tag. */
export function canonicalLocale(locale: unknown): string | undefined {
  if (typeof locale !== 'string' || locale.length > 100) return undefined;
  try {
    return Intl.getCanonicalLocales(locale)[0];
  } catch {
    return undefined;
  }
}
