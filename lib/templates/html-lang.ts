/**
 * The `lang` of a template's `<html>` element, read as a browser reads it (parse5): a tag inside a
 * comment, a script or a `<template>` is not the element, and a second `<html>` tag further down
 * (after a `{% liquid %}` preamble, which the parser takes for body text and so creates the html
 * element without it) adds its lang as browsers add it.
 */
import { defaultTreeAdapter, html as html5, parse, type DefaultTreeAdapterTypes, type TreeAdapter, type DefaultTreeAdapterMap } from 'parse5';

/**
 * Characters of a template read for its `<html lang>`. The parser stops as soon as the html
 * element has a lang, which in a real template is within its first few hundred characters; this
 * bounds the work for one without: 32 KB parse in a few milliseconds, all of a 5 MB template in
 * seconds. An `<html>` tag first given further in than this is not read.
 */
export const HTML_LANG_SEARCH_CHARS = 32_768;

/** Thrown from inside the parser to stop it once the lang is known (parse5 catches nothing). */
class LangFound {
  readonly lang: string;
  constructor(lang: string) {
    this.lang = lang;
  }
}

type Element = DefaultTreeAdapterTypes.Element;

const langOf = (element: Element): string | undefined => element.attrs.find((attribute) => attribute.name === 'lang')?.value;

/**
 * parse5's default tree adapter, watching the document's html element: the first HTML-namespace
 * html element made (from the first `<html>` tag, or implied by whatever comes first), and the
 * attributes later `<html>` tags add to it (adoptAttributes adds only the ones it lacks, so the
 * first lang it gets is its lang for good).
 */
function langWatchingTreeAdapter(): TreeAdapter<DefaultTreeAdapterMap> {
  let root: Element | undefined;
  const stopIfKnown = (element: Element) => {
    const lang = langOf(element);
    if (lang !== undefined) throw new LangFound(lang);
  };
  return {
    ...defaultTreeAdapter,
    createElement(tagName, namespaceURI, attrs) {
      const element = defaultTreeAdapter.createElement(tagName, namespaceURI, attrs);
      if (root === undefined && tagName === 'html' && namespaceURI === html5.NS.HTML) {
        root = element;
        stopIfKnown(element);
      }
      return element;
    },
    adoptAttributes(recipient, attrs) {
      defaultTreeAdapter.adoptAttributes(recipient, attrs);
      if (recipient === root) stopIfKnown(recipient);
    },
  };
}

/** The `lang` attribute of `html`'s html element, as given (not checked as a locale); undefined without one. */
export function htmlLang(html: string): string | undefined {
  try {
    parse(html.slice(0, HTML_LANG_SEARCH_CHARS), { treeAdapter: langWatchingTreeAdapter() });
  } catch (error) {
    if (error instanceof LangFound) return error.lang;
    throw error;
  }
  return undefined;
}
