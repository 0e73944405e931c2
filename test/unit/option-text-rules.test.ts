/**
 * Text a caller names things with (issue #29, items 5 and 7): the download filename, watermark
 * text, encryption passwords, and the smaller option messages (page_ranges, http_headers, url
 * credentials). Through the single endpoint's body schema, as a caller meets them.
 */
import { describe, expect, it } from 'vitest';
import { generateBodySchema } from '#lib/documents/document-options.ts';
import { assertUrlAllowed } from '#lib/render/document-url.ts';
import { withExtension } from '#lib/storage/filenames.ts';
import { DocumentError } from '#lib/render/errors.ts';
import { describeIssue, resolveRenderOptions } from '#lib/render/options.ts';

const HTML = '<p>x</p>';

function parse(body: Record<string, unknown>): { ok: true; data: Record<string, unknown> } | { ok: false; message: string } {
  const result = generateBodySchema.safeParse({ html: HTML, ...body });
  return result.success ? { ok: true, data: result.data } : { ok: false, message: describeIssue(result.error) };
}

function messageOf(body: Record<string, unknown>): string {
  const result = parse(body);
  if (result.ok) throw new Error(`accepted: ${JSON.stringify(body)}`);
  return result.message;
}

describe('filename', () => {
  it.each([
    ['plain', 'invoice', 'invoice.pdf'],
    ['German', 'Rechnung März 2026', 'Rechnung März 2026.pdf'],
    ['Tamil with an extension', 'விலை.PDF', 'விலை.PDF'],
    ['Japanese with fullwidth punctuation', '請求書：2026年？', '請求書：2026年？.pdf'],
    ['dots inside', 'v1.2.3 report', 'v1.2.3 report.pdf'],
    ['66 CJK characters (198 bytes)', '漢'.repeat(66), `${'漢'.repeat(66)}.pdf`],
    ['a reserved word inside a longer name', 'CONTRACT', 'CONTRACT.pdf'],
    ['emoji', 'report 📄', 'report 📄.pdf'],
    ['combining marks (NFD)', 'Cafe\u0301', 'Cafe\u0301.pdf'],
  ])('accepts %s', (_name, filename, saved) => {
    // Act
    const result = parse({ filename });

    // Assess: a PDF saves under the name with `.pdf` added when missing (lib/documents/produce-pdf.ts).
    expect(result).toMatchObject({ ok: true, data: { filename } });
    expect(withExtension(filename, 'pdf')).toBe(saved);
  });

  it.each([
    ['png', 'card', 'card.png'],
    ['png, given', 'card.PNG', 'card.PNG'],
    ['jpg for jpeg', 'photo', 'photo.jpg'],
    ['jpeg spelled out', 'photo.jpeg', 'photo.jpeg'],
    ['webp after a .pdf', 'report.pdf', 'report.pdf.webp'],
  ])('a picture saves under its own extension: %s', (_name, filename, saved) => {
    // Act
    const extension = saved.endsWith('.webp') ? 'webp' : saved.toLowerCase().endsWith('.png') ? 'png' : 'jpg';

    // Assess
    expect(withExtension(filename, extension)).toBe(saved);
  });

  it.each([
    ['200 CJK characters (600 bytes)', '漢'.repeat(200), /200 bytes of UTF-8: it has 600/],
    ['67 CJK characters (201 bytes)', '漢'.repeat(67), /200 bytes/],
    ['201 ASCII characters', 'x'.repeat(201), /200 bytes/],
    ['empty', '', /not empty/],
    ['a right-to-left override', 'invoice\u202egpj.exe', /reordering characters.*\(it has U\+202E\)/],
    ['a left-to-right embedding', 'a\u202ab', /U\+202A/],
    ['a right-to-left isolate', 'a\u2067b', /U\+2067/],
    ['a right-to-left mark', 'a\u200fb', /U\+200F/],
    ['an Arabic letter mark', 'a\u061cb', /U\+061C/],
    ['a zero-width space', 'in\u200bvoice', /U\+200B/],
    ['a zero-width joiner', 'in\u200dvoice', /U\+200D/],
    ['a byte order mark', '\ufeffinvoice', /U\+FEFF/],
    ['a soft hyphen', 'in\u00advoice', /U\+00AD/],
    ['a line separator', 'a\u2028b', /U\+2028/],
    ['a paragraph separator', 'a\u2029b', /U\+2029/],
    ['a newline', 'line\nbreak', /U\+000A/],
    ['DEL', 'a\u007fb', /U\+007F/],
    ['a C1 control', 'a\u0085b', /U\+0085/],
    ['a private-use character', 'a\ue000b', /U\+E000/],
    ['a no-break space', 'invoice\u00a0.exe', /spaces other than U\+0020/],
    ['an ideographic space', 'a\u3000b', /spaces other than U\+0020/],
    ['a slash', 'a/b', /slashes/],
    ['a backslash', 'a\\b', /slashes/],
    ['fullwidth solidus', '..／..／x', /slashes/],
    ['division slash', 'a\u2215b', /slashes/],
    ['fraction slash', 'a\u2044b', /slashes/],
    ['big solidus', 'a\u29f8b', /slashes/],
    ['fullwidth reverse solidus', 'a\uff3cb', /slashes/],
    ['small reverse solidus', 'a\ufe68b', /slashes/],
    ['set minus', 'a\u2216b', /slashes/],
    ['big reverse solidus', 'a\u29f9b', /slashes/],
    ['reverse solidus operator', 'a\u29f5b', /slashes/],
    ['a leading dot', '.bashrc', /start with a dot/],
    ['two dots', '..', /start with a dot/],
    ['a fullwidth leading dot', '．bashrc', /start with a dot/],
    ['a leading space', ' invoice', /start with a dot or a space/],
    ['a trailing dot', 'invoice.', /end with a dot/],
    ['a trailing space', 'invoice ', /end with a dot or a space/],
    ['CON', 'CON', /Windows device name \(CON\)/],
    ['nul with an extension', 'nul.pdf', /Windows device name \(NUL\)/],
    ['COM1 with two extensions', 'com1.tar.gz', /Windows device name \(COM1\)/],
    ['LPT9', 'LPT9', /Windows device name/],
    ['COM with a superscript digit', 'COM¹', /Windows device name/],
    ['AUX with a space before the extension', 'AUX .txt', /Windows device name/],
    ['an asterisk', 'a*b', /\* \? < > \| : "/],
    ['a question mark', 'a?b', /\* \? < > \| : "/],
    ['angle brackets', 'a<b>', /\* \? < > \| : "/],
    ['a pipe', 'a|b', /\* \? < > \| : "/],
    ['a colon', 'C:x', /\* \? < > \| : "/],
    ['a double quote', 'a"b', /\* \? < > \| : "/],
    ['a lone surrogate', '\ud800bad', /well-formed/],
    ['a number', 12, /^filename/],
  ])('refuses %s, naming filename and the reason', (_name, filename, reason) => {
    // Act
    const message = messageOf({ filename });

    // Assess
    expect(message).toMatch(/^filename /);
    expect(message).toMatch(reason);
  });
});

describe('watermark.text', () => {
  it.each([
    ['a tab', 'DRAFT\tCOPY'],
    ['a newline', 'DRAFT\nCOPY'],
    ['a bell', 'DRAFT\u0007'],
    ['a C1 control', 'DRAFT\u0085'],
    ['a right-to-left override', 'DRAFT \u202eTFARD'],
    ['a first strong isolate', 'DRAFT \u2068x'],
    ['a zero-width space', 'DR\u200bAFT'],
    ['a byte order mark inside', 'DR\ufeffAFT'],
    ['a line separator', 'DRAFT\u2028COPY'],
    ['a private-use character', 'DRAFT \ue000'],
  ])('refuses %s', (_name, text) => {
    // Act
    const message = messageOf({ watermark: { text } });

    // Assess
    expect(message).toMatch(/^watermark\.text must not contain control, invisible or reordering characters/);
  });

  it.each(['DRAFT', 'Entwurf – nicht gültig', 'مسودة', '草稿 📄', 'Cafe\u0301'])('accepts %j', (text) => {
    expect(parse({ watermark: { text } }).ok).toBe(true);
  });
});

describe('encryption passwords', () => {
  const resolveEncryption = (encryption: Record<string, unknown>) => {
    const result = parse({ encryption });
    if (!result.ok) return { error: result.message };
    const resolved = resolveRenderOptions(result.data);
    return 'error' in resolved ? resolved : { encryption: resolved.finishing.encryption };
  };

  it.each([
    ['one letter', 'a'],
    ['seven letters', 'abcdefg'],
    ['seven characters, one of them decomposed', 'abcde\u0301f'],
  ])('refuses an owner password of %s', (_name, owner) => {
    expect(resolveEncryption({ owner_password: owner })).toEqual({ error: 'encryption.owner_password must have at least 8 characters' });
  });

  it('accepts an owner password of 8 characters, and an empty user password as none', () => {
    expect(resolveEncryption({ owner_password: 'öwner-pw', user_password: '' })).toMatchObject({ encryption: { ownerPassword: 'öwner-pw', userPassword: '' } });
  });

  it('refuses NFC and NFD spellings of one password as the same password', () => {
    // Prepare
    const composed = 'caf\u00e9-secret';
    const decomposed = 'cafe\u0301-secret';

    // Act
    const result = resolveEncryption({ owner_password: composed, user_password: decomposed });

    // Assess
    expect(result).toEqual({ error: 'encryption.owner_password must differ from encryption.user_password' });
  });

  it('hands qpdf the password composed, as a reader normalises what is typed', () => {
    expect(resolveEncryption({ owner_password: 'cafe\u0301-secret', user_password: 'A\u030angstro\u0308m' })).toMatchObject({
      encryption: { ownerPassword: 'caf\u00e9-secret', userPassword: '\u00c5ngstr\u00f6m' },
    });
  });

  it.each([
    ['a zero-width space', 'owner\u200bsecret', /invisible, format or unassigned characters/],
    ['a soft hyphen', 'owner\u00adsecret', /invisible, format or unassigned characters/],
    ['a variation selector', 'owner-secret\u2764\ufe0f', /invisible, format or unassigned characters/],
    ['a right-to-left override', 'owner\u202esecret', /invisible, format or unassigned characters/],
    ['a private-use character', 'owner-secret\ue000', /invisible, format or unassigned characters/],
    ['a no-break space', 'owner\u00a0secret', /spaces other than U\+0020/],
    ['fullwidth letters', 'ｏｗｎｅｒ-secret', /compatibility characters/],
    ['a ligature', 'ﬁle-secret', /compatibility characters/],
    ['a C1 control', 'owner\u0085secret', /invisible, format or unassigned characters/],
  ])('refuses an owner password with %s', (_name, owner, reason) => {
    const result = resolveEncryption({ owner_password: owner });
    expect(result).toEqual({ error: expect.stringMatching(/^encryption\.owner_password must not contain /) });
    expect((result as { error: string }).error).toMatch(reason);
  });

  it('refuses a user password SASLprep would alter, naming user_password', () => {
    expect(resolveEncryption({ owner_password: 'owner-secret', user_password: 'open\u200bme' })).toEqual({
      error: expect.stringMatching(/^encryption\.user_password must not contain invisible/),
    });
  });
});

describe('page_ranges', () => {
  it.each([
    ['1-999999999', /^page_ranges: "1-999999999" is out of bounds: page numbers run from 1 to 1000000$/],
    ['2, 12345678901234567890', /"12345678901234567890" is out of bounds/],
    ['0', /"0" is out of bounds/],
  ])('names the range in %j', (pageRanges, message) => {
    expect(messageOf({ page_ranges: pageRanges })).toMatch(message);
  });

  it('still calls text that is no range malformed', () => {
    expect(messageOf({ page_ranges: '1-x' })).toMatch(/^page_ranges must be page numbers and ranges/);
  });
});

describe('http_headers', () => {
  it.each(['Set-Cookie', 'set-cookie', 'Set-Cookie2'])('refuses %s, naming it', (name) => {
    expect(messageOf({ url: 'https://example.com/', http_headers: { [name]: 'a=b' } })).toBe(
      `http_headers may not set ${name} (it is a response header; use cookies)`,
    );
  });
});

describe('url credentials', () => {
  const publicResolver = async () => ['93.184.215.14'];

  it.each(['https://user:pass@example.com/', 'https://user@example.com/', 'https://:pass@example.com/'])('refuses %s, pointing to basic_auth', async (url) => {
    // Act
    const error = await assertUrlAllowed(url, { allowPrivateHosts: new Set(), resolve: publicResolver }).catch((caught: unknown) => caught);

    // Assess
    expect(error).toBeInstanceOf(DocumentError);
    expect(error).toMatchObject({ code: 'URL_NOT_ALLOWED', message: 'url must not carry credentials (user:password@): give them as basic_auth instead' });
  });

  it('accepts the same URL without them', async () => {
    await expect(assertUrlAllowed('https://example.com/', { allowPrivateHosts: new Set(), resolve: publicResolver })).resolves.toBeInstanceOf(URL);
  });
});
