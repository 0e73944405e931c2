/**
 * Uploads of bulk job input (`POST /v1/uploads`, shared/spec/beyond.md "Bulk jobs"): the caller gets
 * `upload_id` and a presigned S3 PUT URL, sends its JSON Lines file straight to S3 (past API
 * Gateway's 10 MB and the API's 5 MB body limits), then names the upload in `POST /v1/pdf/bulk`.
 *
 * Each upload is one object under UPLOAD_PREFIX, in a folder of its key's id
 * (`uploads/<key id>/<upload id>.jsonl`): the object key is derived from the caller's key id and
 * the upload id, so an upload id given by another key names an object that does not exist for it
 * (the same "not found" as a made-up id), and no listing or lookup table is needed. Uploads are
 * deleted once their job no longer needs them, and in any case by the bucket's lifecycle rule
 * `expire-uploads`, UPLOAD_RETENTION_DAYS after they were written (cdk/constructs/storage.ts).
 *
 * The presigned URL is valid for UPLOAD_URL_TTL_SECONDS. S3 cannot cap the size of a presigned PUT
 * (only a presigned POST's policy can, and the spec fixes a PUT), but it can fix it: when the
 * caller says how large its file is, that Content-Length is signed and S3 refuses any other
 * (403 SignatureDoesNotMatch); a size over MAX_UPLOAD_BYTES is refused before any URL is made.
 * Without a stated size, what was uploaded is measured when the job reads it (uploadSize, and the
 * reader's own count, lib/bulk/upload-lines.ts): too large is refused then, before any work.
 */
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, NoSuchKey, NotFound, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { randomBase62 } from '#lib/random.ts';
import { UPLOAD_PREFIX, UPLOAD_RETENTION_DAYS, uploadObjectKey } from './bulk-records.ts';
import { MAX_UPLOAD_BYTES } from './upload-lines.ts';

/**
 * Where uploads live and for how long (a job reads its lines back from its upload while it runs, so
 * an upload must outlive the longest job), and the object key of one: the bulk records' own
 * (lib/bulk/bulk-records.ts), which the submission reads.
 */
export { UPLOAD_PREFIX, UPLOAD_RETENTION_DAYS, uploadObjectKey };

/** How long the PUT URL works: time to start sending a large file over a slow line, and no more. */
export const UPLOAD_URL_TTL_SECONDS = 60 * 60;
/** `upl_` and 24 base62 characters (about 143 random bits), like the ids of PDFs and jobs. */
export const UPLOAD_ID_PATTERN = /^upl_[0-9A-Za-z]{20,64}$/;

export interface UploadStore {
  readonly s3: S3Client;
  readonly bucketName: string;
}


export function newUploadId(): string {
  return 'upl_' + randomBase62(24);
}

export function isUploadId(value: unknown): value is string {
  return typeof value === 'string' && UPLOAD_ID_PATTERN.test(value);
}

/** The upload's object, once its id is known to be one (so it can never name another path). */
function objectKey(owner: { readonly keyId: string }, uploadId: string): string {
  if (!isUploadId(uploadId)) throw new Error('not an upload id');
  return uploadObjectKey(owner.keyId, uploadId);
}

/** What `POST /v1/uploads` answers. */
export interface CreatedUpload {
  readonly upload_id: string;
  /** PUT the file here (no other header needed; `Content-Length` must be the stated size, when one was stated). */
  readonly url: string;
  readonly expires_at: string;
}

/** A stated size the upload cannot have. */
export class UploadSizeError extends Error {
  override readonly name = 'UploadSizeError';
}

/**
 * A new upload and its presigned PUT URL. `contentLength`, when the caller states it (1 to
 * MAX_UPLOAD_BYTES), is signed into the URL so S3 takes exactly that many bytes.
 */
export async function createUpload(
  store: UploadStore,
  owner: { readonly keyId: string },
  { contentLength, now = new Date(), ttlSeconds = UPLOAD_URL_TTL_SECONDS }: { contentLength?: number; now?: Date; ttlSeconds?: number } = {},
): Promise<CreatedUpload> {
  if (contentLength !== undefined && (!Number.isSafeInteger(contentLength) || contentLength < 1 || contentLength > MAX_UPLOAD_BYTES)) {
    throw new UploadSizeError(`An upload is 1 to ${MAX_UPLOAD_BYTES} bytes`);
  }
  const uploadId = newUploadId();
  const command = new PutObjectCommand({
    Bucket: store.bucketName,
    Key: objectKey(owner, uploadId),
    ...(contentLength !== undefined && { ContentLength: contentLength }),
  });
  // The client must not add a checksum of its own (the project's S3 client computes them only when
  // required): a checksum of the empty body would be signed into the URL and refuse every real file.
  const url = await getSignedUrl(store.s3, command, { expiresIn: ttlSeconds, signingDate: now });
  return { upload_id: uploadId, url, expires_at: new Date(now.getTime() + ttlSeconds * 1000).toISOString() };
}

const isMissing = (error: unknown) => error instanceof NoSuchKey || error instanceof NotFound || (error as { name?: string }).name === 'NoSuchKey' || (error as { name?: string }).name === 'NotFound';

/** The uploaded file's size, or undefined when nothing was uploaded under that id for this key. */
export async function uploadSize(store: UploadStore, owner: { readonly keyId: string }, uploadId: string): Promise<number | undefined> {
  if (!isUploadId(uploadId)) return undefined;
  try {
    const head = await store.s3.send(new HeadObjectCommand({ Bucket: store.bucketName, Key: objectKey(owner, uploadId) }));
    return head.ContentLength ?? 0;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/**
 * The uploaded file as a stream (readUploadLines reads it), or undefined when there is none.
 * `range` reads only bytes `start` to `end - 1`: one line, as readUploadLines located it.
 */
export async function openUpload(
  store: UploadStore,
  owner: { readonly keyId: string },
  uploadId: string,
  { range, abortSignal }: { range?: { start: number; end: number }; abortSignal?: AbortSignal } = {},
): Promise<{ body: AsyncIterable<Uint8Array>; size: number } | undefined> {
  if (!isUploadId(uploadId)) return undefined;
  // S3 has no empty range: an empty line is read without asking.
  if (range && range.end <= range.start) return { body: (async function* () {})(), size: 0 };
  try {
    const object = await store.s3.send(
      new GetObjectCommand({ Bucket: store.bucketName, Key: objectKey(owner, uploadId), ...(range && { Range: `bytes=${range.start}-${range.end - 1}` }) }),
      { ...(abortSignal && { abortSignal }) },
    );
    if (!object.Body) throw new Error('GetObject answered no body');
    return { body: object.Body as AsyncIterable<Uint8Array>, size: object.ContentLength ?? 0 };
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** One line's text, read back by its byte range (a worker's item), or undefined when the upload is gone. */
export async function readUploadRange(store: UploadStore, owner: { readonly keyId: string }, uploadId: string, range: { start: number; end: number }): Promise<string | undefined> {
  const opened = await openUpload(store, owner, uploadId, { range });
  if (!opened) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** Removes the upload (once its job no longer needs it); nothing happens when it is already gone. */
export async function deleteUpload(store: UploadStore, owner: { readonly keyId: string }, uploadId: string): Promise<void> {
  if (!isUploadId(uploadId)) return;
  await store.s3.send(new DeleteObjectCommand({ Bucket: store.bucketName, Key: objectKey(owner, uploadId) }));
}
