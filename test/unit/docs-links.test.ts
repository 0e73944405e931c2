/**
 * The README is the front door: every page of docs/ is one click from it, and every link of the
 * README and of docs/ reaches a file of the checkout (and, with a #fragment, a heading of it): none
 * leaves the repository, where a plain clone would find nothing.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** Markdown outside fenced code blocks (and, unless kept, outside inline code). */
function prose(markdown: string, { keepInlineCode = false } = {}): string {
  const text = markdown
    .split(/^```.*$/m)
    .filter((_, index) => index % 2 === 0)
    .join('\n');
  return keepInlineCode ? text : text.replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*]/g, '')
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(path: string): Set<string> {
  const headings = prose(readFileSync(join(ROOT, path), 'utf8'), { keepInlineCode: true }).match(/^#{1,6} .*$/gm) ?? [];
  return new Set(headings.map((heading) => anchorOf(heading.replace(/^#+ /, ''))));
}

/** Every link of a page that points into the checkout: [text](target). */
function linksOf(page: string): { readonly target: string; readonly file: string; readonly fragment?: string }[] {
  const links = [...prose(readFileSync(join(ROOT, page), 'utf8')).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
  return links
    .filter((target) => !/^[a-z]+:/i.test(target))
    .map((target) => {
      const [path, fragment] = target.split('#') as [string, string | undefined];
      return { target, file: path === '' ? page : relative(ROOT, join(ROOT, dirname(page), path)), fragment };
    });
}

describe('the README and docs/', () => {
  it('the README links every page of docs/', () => {
    const linked = new Set(linksOf('README.md').map(({ file }) => file));
    expect(PAGES.filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([]);
  });

  it.each(PAGES)('every link of %s reaches a file, and a heading where it names one', (page) => {
    const broken = linksOf(page).filter(({ file, fragment }) => {
      if (!existsSync(join(ROOT, file))) return true;
      return fragment !== undefined && file.endsWith('.md') && !anchorsOf(file).has(fragment);
    });
    expect(broken.map(({ target }) => target)).toEqual([]);
  });

  it.each(PAGES)('%s links to nothing outside the repository, and names no file a clone lacks', (page) => {
    expect(linksOf(page).filter(({ file }) => file.startsWith('..')).map(({ target }) => target)).toEqual([]);
    // The specification the project was built from lives beside the repository, not in it.
    expect(readFileSync(join(ROOT, page), 'utf8')).not.toMatch(/shared\/spec|\.\.\/shared\//);
  });

  it('the README stays a front door: under 200 lines', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThan(200);
  });
});
