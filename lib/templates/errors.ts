/**
 * The one error the template engine throws. Its message is written for the customer who wrote the
 * template (it becomes a 4xx answer's message), so it says which limit or syntax rule was broken
 * and where, and never carries a stack, a host path or an internal error's text; the underlying
 * error, if any, is kept as `cause` for our logs only.
 */

/** Which of a template's three sources an error is in. */
export type TemplateSourceName = 'html' | 'header_html' | 'footer_html';

export class TemplateError extends Error {
  override readonly name = 'TemplateError';
  /** The source the error is in, when known. */
  readonly source: TemplateSourceName | undefined;
  /** 1-based line and column in that source, when known. */
  readonly line: number | undefined;
  readonly column: number | undefined;
  /** What went wrong without the location prefix (the message is `"<source> line L, column C: <detail>"`). */
  readonly detail: string;

  constructor(detail: string, where: { source?: TemplateSourceName; line?: number; column?: number; cause?: unknown } = {}) {
    const location = [
      where.source,
      where.line === undefined ? undefined : `line ${where.line}` + (where.column === undefined ? '' : `, column ${where.column}`),
    ]
      .filter((part) => part !== undefined)
      .join(' ');
    super(location === '' ? detail : `${location}: ${detail}`, where.cause === undefined ? undefined : { cause: where.cause });
    this.detail = detail;
    this.source = where.source;
    this.line = where.line;
    this.column = where.column;
  }
}
