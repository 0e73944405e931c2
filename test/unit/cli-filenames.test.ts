/**
 * The CLI's names for downloaded files (packages/cli/src/untrusted.ts): a name from the server never
 * escapes the directory, and a picture is saved with its own extension, not `.pdf`.
 */
import { describe, expect, it } from 'vitest';
import { extensionOf, safePdfFilename } from '../../packages/cli/src/untrusted.ts';

describe('pdfapi download: the file name', () => {
  it('a PDF keeps its name and .pdf; a picture gets the extension of its content_type', () => {
    expect(safePdfFilename('invoice-7.pdf', 'pdf_1', extensionOf('application/pdf'))).toBe('invoice-7.pdf');
    expect(safePdfFilename('card.png', 'img_1', extensionOf('image/png'))).toBe('card.png');
    expect(safePdfFilename('photo.jpg', 'img_2', extensionOf('image/jpeg'))).toBe('photo.jpg');
    expect(safePdfFilename('thumb', 'img_3', extensionOf('image/webp'))).toBe('thumb.webp');
    // A record without a content_type (a server before pictures) is a PDF.
    expect(extensionOf(undefined)).toBe('pdf');
  });

  it('a hostile name stays one safe component in the current directory, whatever the extension', () => {
    expect(safePdfFilename('../../etc/passwd.png', 'img_4', 'png')).toBe('_.._etc_passwd.png');
    expect(safePdfFilename('...', 'img_5', 'png')).toBe('img_5.png');
    expect(safePdfFilename('CON.png', 'img_6', 'png')).toBe('_CON.png');
  });
});
