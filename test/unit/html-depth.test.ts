/**
 * The element nesting limit of `html` (MAX_HTML_DEPTH): the parse stops as soon as an element is
 * placed past it (issue #29, item 8), with the same answers as measuring the finished tree. What is
 * asserted is the answer; the time is in docs/api.md ("Limits of a request").
 */
import { describe, expect, it } from 'vitest';
import { inspectHtml, MAX_HTML_DEPTH } from '#lib/render/html.ts';

const TOO_DEEP = `html nests elements more than ${MAX_HTML_DEPTH} deep`;
const FIVE_MB = 5 * 1024 * 1024;
/** `unit` repeated to 5 MB. */
const fiveMegabytesOf = (unit: string) => unit.repeat(Math.floor(FIVE_MB / unit.length));
/** `unit` repeated to 1 MB: an accepted document is parsed to its end, seconds for 5 MB on a busy machine. */
const oneMegabyteOf = (unit: string) => unit.repeat(Math.floor(FIVE_MB / 5 / unit.length));
/** <html> and <body> are the first two levels. */
const BODY_DEPTH = 2;

describe('html nested past the limit is refused', () => {
  it.each([
    ['<div>', fiveMegabytesOf('<div>')],
    ['<b> (formatting elements)', fiveMegabytesOf('<b>')],
    ['<b><i><u><s>', fiveMegabytesOf('<b><i><u><s>')],
    ['<font>', fiveMegabytesOf('<font>')],
    ['<table><tr><td>', fiveMegabytesOf('<table><tr><td>')],
    ['<svg> with nested <g>', '<svg>' + fiveMegabytesOf('<g>')],
    ['<a><b></a> (misnested, the adoption agency each time)', fiveMegabytesOf('<a><b></a>')],
    ['<div> inside a <template>', '<template>' + fiveMegabytesOf('<div>')],
    ['<div> foster-parented out of a <table>', '<table>' + fiveMegabytesOf('<div>')],
  ])('5 MB of nested %s', (_name, html) => {
    // Act
    const inspection = inspectHtml(html);

    // Assess
    expect(inspection.problem).toBe(TOO_DEEP);
  });

  it('one level past the limit, and not at the limit', () => {
    // Prepare
    const atLimit = '<div>'.repeat(MAX_HTML_DEPTH - BODY_DEPTH);
    const pastLimit = '<div>'.repeat(MAX_HTML_DEPTH - BODY_DEPTH + 1);

    // Act
    const answers = [inspectHtml(atLimit), inspectHtml(pastLimit)];

    // Assess
    expect(answers[0]).toEqual({ scripted: false, webFonts: false, animated: false });
    expect(answers[1]!.problem).toBe(TOO_DEEP);
  });

  it('counts a template’s content at the template’s depth, as the finished tree is measured', () => {
    // Prepare: nested templates add one level each (the template element), their content none; the
    // first lands in <head>, at level 3
    const atLimit = '<template>'.repeat(MAX_HTML_DEPTH - BODY_DEPTH);
    const pastLimit = '<template>'.repeat(MAX_HTML_DEPTH - BODY_DEPTH + 1);

    // Act
    const answers = [inspectHtml(atLimit), inspectHtml(pastLimit)];

    // Assess
    expect(answers[0]!.problem).toBeUndefined();
    expect(answers[1]!.problem).toBe(TOO_DEEP);
  });

  it('a structural error before the point where the nesting goes too deep is still the one reported', () => {
    // Act
    const inspection = inspectHtml('<p>\u0000</p>' + '<div>'.repeat(MAX_HTML_DEPTH));

    // Assess
    expect(inspection.problem).toMatch(/^html is malformed: it contains a NUL character/);
  });
});

describe('large documents that do not nest deeply are accepted as before', () => {
  it.each([
    ['flat <div>s', oneMegabyteOf('<div>x</div>'), false],
    ['<p> after <p> (each closes the last)', oneMegabyteOf('<p>'), false],
    ['<a> after <a> (each closes the last)', oneMegabyteOf('<a>'), false],
    ['<table> after <table> (each closes the last)', oneMegabyteOf('<table>'), false],
    ['text', oneMegabyteOf('x '), false],
    ['flat <div>s and a script at the end', oneMegabyteOf('<div>x</div>') + '<script>1</script>', true],
  ])('1 MB of %s', (_name, html, scripted) => {
    // Act
    const inspection = inspectHtml(html);

    // Assess
    expect(inspection).toEqual({ scripted, webFonts: false, animated: false });
  }, 60_000);
});
