/**
 * "Valid HTML" as decisions.md defines it: a non-empty string that an HTML5 parser reads without
 * structural errors. Real-world HTML is sloppy (no doctype, unclosed <p>), and browsers recover from
 * that by design, so only errors that mean the document is truncated or corrupt are refused.
 */
import { parse, type ParserError } from 'parse5';

const STRUCTURAL_ERRORS: Readonly<Record<string, string>> = {
  'eof-before-tag-name': 'a tag is cut off at the end of the input',
  'eof-in-tag': 'a tag or attribute is not terminated before the end of the input',
  'eof-in-comment': 'a comment is not terminated before the end of the input',
  'eof-in-doctype': 'the doctype is not terminated before the end of the input',
  'eof-in-cdata': 'a CDATA section is not terminated before the end of the input',
  'eof-in-script-html-comment-like-text': 'a script is not terminated before the end of the input',
  'eof-in-element-that-can-contain-only-text':
    'a <script>, <style>, <textarea> or <title> element is not closed before the end of the input',
  'unexpected-null-character': 'it contains a NUL character',
  'null-character-reference': 'it contains a NUL character reference (&#0;)',
};

/** Why `html` is not acceptable, or undefined when it is. */
export function findHtmlProblem(html: unknown): string | undefined {
  if (typeof html !== 'string') return 'html must be a string';
  if (html.trim() === '') return 'html must not be empty';
  let problem: string | undefined;
  parse(html, {
    onParseError(error: ParserError) {
      const reason = STRUCTURAL_ERRORS[error.code];
      if (reason && !problem) problem = `html is malformed: ${reason} (line ${error.startLine}, column ${error.startCol})`;
    },
  });
  return problem;
}
