/**
 * Uploads of bulk job input (lib/bulk/uploads.ts) against a real S3 API (s3rver): the presigned PUT
 * takes the file, the upload reads back only for the key that made it, whole or one line by its
 * byte range, and is gone once deleted. What s3rver does not check (signatures) is checked in the
 * URL: a stated size is among the signed headers, which S3 holds the PUT to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readUploadLines } from '#lib/bulk/upload-lines.ts';
import { createUpload, deleteUpload, openUpload, readUploadRange, UPLOAD_URL_TTL_SECONDS, uploadObjectKey, uploadSize } from '#lib/bulk/uploads.ts';
import { startTestS3, type TestS3 } from '../support/s3rver.ts';

let store: TestS3;
beforeAll(async () => {
  store = await startTestS3();
});
afterAll(async () => {
  await store?.close();
});

const owner = { keyId: 'key_0123456789abcdef' };
const lines = ['{"html": "<h1>One</h1>"}', '{"html": "<h1>Two</h1>", "options": {"format": "A5"}}', '{"url": "https://example.com/three"}'];

describe('uploads', () => {
  it('takes a file by the presigned PUT and reads it back, whole or line by line', async () => {
    // Arrange
    const now = new Date();
    const upload = await createUpload(store, owner, { now });
    expect(upload.upload_id).toMatch(/^upl_[0-9A-Za-z]{24}$/);
    expect(Date.parse(upload.expires_at) - now.getTime()).toBe(UPLOAD_URL_TTL_SECONDS * 1000);
    expect(new URL(upload.url).pathname).toBe(`/${store.bucketName}/${uploadObjectKey(owner.keyId, upload.upload_id)}`);
    const file = `${lines.join('\r\n')}\r\n`;

    // Act
    const put = await fetch(upload.url, { method: 'PUT', body: file });

    // Assert
    expect(put.status).toBe(200);
    expect(await uploadSize(store, owner, upload.upload_id)).toBe(Buffer.byteLength(file));
    const opened = await openUpload(store, owner, upload.upload_id);
    const read = [];
    for await (const line of readUploadLines(opened!.body)) read.push(line);
    expect(read.map((line) => line.error)).toEqual([undefined, undefined, undefined]);
    expect(await readUploadRange(store, owner, upload.upload_id, read[1]!)).toBe(lines[1]);
  });

  it('is not found by another key, nor once deleted', async () => {
    // Arrange
    const upload = await createUpload(store, owner);
    await fetch(upload.url, { method: 'PUT', body: lines[0] });

    // Act, Assert
    expect(await uploadSize(store, { keyId: 'key_someoneelse000000' }, upload.upload_id)).toBeUndefined();
    expect(await openUpload(store, { keyId: 'key_someoneelse000000' }, upload.upload_id)).toBeUndefined();
    await deleteUpload(store, owner, upload.upload_id);
    expect(await uploadSize(store, owner, upload.upload_id)).toBeUndefined();
    expect(await openUpload(store, owner, 'upl_not-an-id')).toBeUndefined();
  });

  it('signs a stated size into the URL, and refuses sizes no upload may have', async () => {
    // Act
    const upload = await createUpload(store, owner, { contentLength: 1234 });

    // Assert: S3 refuses a PUT of any other length (SignatureDoesNotMatch); no checksum is signed.
    const query = new URL(upload.url).searchParams;
    expect(query.get('X-Amz-SignedHeaders')?.split(';')).toContain('content-length');
    expect([...query.keys()].filter((name) => name.toLowerCase().includes('checksum'))).toEqual([]);
    await expect(createUpload(store, owner, { contentLength: 0 })).rejects.toThrow(/1 to/);
    await expect(createUpload(store, owner, { contentLength: 300 * 1024 * 1024 })).rejects.toThrow(/1 to/);
  });

  it('stops taking the file once the URL expired', async () => {
    // Arrange: a URL that lived one second, made five seconds ago.
    const upload = await createUpload(store, owner, { ttlSeconds: 1, now: new Date(Date.now() - 5_000) });

    // Act
    const put = await fetch(upload.url, { method: 'PUT', body: lines[0] });

    // Assert
    expect(put.status).toBe(403);
    expect(await uploadSize(store, owner, upload.upload_id)).toBeUndefined();
  });
});
