/**
 * Header and footer templates: the API's `{{variables}}` turned into what Chromium prints.
 *
 * Chromium draws templates in the page margin, in their own tiny document, at a default font
 * size under 1 pt, and only if the margin is tall enough. So a template is wrapped in a box with a
 * readable font size and the page's side margins, and a header or footer gets a default margin
 * when the caller did not set one.
 */
import type { Margin } from './options.ts';

/** Margin given to the side a header or footer sits on when the caller did not choose one. */
export const DEFAULT_TEMPLATE_MARGIN = '20mm';
/** Inset from the page edge when the caller gave no side margin. */
const DEFAULT_SIDE_INSET = '10mm';
export const DEFAULT_TEMPLATE_FONT_SIZE = '10px';

const VARIABLE = /\{\{\s*(pageNumber|totalPages|date)\s*\}\}/g;

/** `{{date}}` prints as an ISO 8601 calendar date in UTC (e.g. 2026-11-21), the same wherever it renders. */
export function formatTemplateDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** Replaces the API's variables with Chromium's template classes (page numbers) or values (date). */
export function substituteVariables(template: string, now: Date): string {
  return template.replace(VARIABLE, (_match, name: string) =>
    name === 'date' ? formatTemplateDate(now) : `<span class="${name}"></span>`,
  );
}

/** The template Chromium receives for a header or footer: substituted and wrapped in a readable box. */
export function buildTemplate(template: string, margin: Margin, now: Date): string {
  const left = margin.left ?? DEFAULT_SIDE_INSET;
  const right = margin.right ?? DEFAULT_SIDE_INSET;
  return (
    `<div style="box-sizing:border-box;width:100%;padding:0 ${right} 0 ${left};` +
    `font-size:${DEFAULT_TEMPLATE_FONT_SIZE};-webkit-print-color-adjust:exact;print-color-adjust:exact">` +
    substituteVariables(template, now) +
    '</div>'
  );
}

/** Puppeteer's header/footer settings for these options. */
export function headerFooterOptions(
  options: { headerHtml?: string; footerHtml?: string; margin: Margin },
  now: Date,
): { displayHeaderFooter: boolean; headerTemplate?: string; footerTemplate?: string; margin: Margin } {
  const { headerHtml, footerHtml } = options;
  if (headerHtml === undefined && footerHtml === undefined) {
    return { displayHeaderFooter: false, margin: options.margin };
  }
  const margin: Margin = { ...options.margin };
  if (headerHtml !== undefined) margin.top ??= DEFAULT_TEMPLATE_MARGIN;
  if (footerHtml !== undefined) margin.bottom ??= DEFAULT_TEMPLATE_MARGIN;
  return {
    displayHeaderFooter: true,
    // An empty template stops Chromium from printing its own default (the title and URL).
    headerTemplate: headerHtml === undefined ? '<span></span>' : buildTemplate(headerHtml, margin, now),
    footerTemplate: footerHtml === undefined ? '<span></span>' : buildTemplate(footerHtml, margin, now),
    margin,
  };
}
