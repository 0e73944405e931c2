/**
 * Writing one S3 object of unknown length as a stream, holding at most one part in memory: what a
 * bulk job's manifest (manifest.ts) and ZIP archive (archive.ts) are written through.
 *
 * Bytes are gathered into a part; a full part is uploaded (UploadPart) before more is taken, so
 * `write` is the back-pressure: a writer that awaits it never holds more than a part plus the chunk
 * it is writing. An object that ends before its first part is full is written with one PutObject
 * (no multipart upload is started: cheaper, and nothing to abort). On any failure the multipart
 * upload is aborted; one the process could not abort (it died) is removed by the bucket's
 * `abort-incomplete-uploads` lifecycle rule after a day (cdk/constructs/storage.ts).
 *
 * S3's rules, kept here: every part but the last is at least 5 MiB, at most 10,000 parts, an object
 * of at most 5 TiB. Parts start at 8 MiB and grow as the part number rises (doubling every 1,000
 * parts), so the 10,000 parts reach past S3's 5 TiB limit while a small object needs a few.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { errorFields, logger } from '#lib/observability/logger.ts';

/** S3's smallest part (every part but the last). */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
/** S3's most parts in one upload. */
export const MAX_PARTS = 10_000;
/** The first parts' size: above S3's minimum, few enough requests for a typical archive. */
export const FIRST_PART_BYTES = 8 * 1024 * 1024;
/** Parts double in size every this many parts: 8 MiB × 1,000 × (1 + 2 + … + 512) ≈ 8 TiB over 10,000 parts. */
const PARTS_PER_DOUBLING = 1_000;

/** The size of part `partNumber` (from 1). */
export function partBytes(partNumber: number, firstPartBytes = FIRST_PART_BYTES): number {
  return firstPartBytes * 2 ** Math.floor((partNumber - 1) / PARTS_PER_DOUBLING);
}

/** Where the object goes, and what S3 answers with when it is downloaded. */
export interface MultipartTarget {
  readonly s3: S3Client;
  readonly bucketName: string;
  readonly key: string;
  readonly contentType: string;
  /** `Content-Disposition` stored with the object (a presigned GET answers it). */
  readonly contentDisposition?: string;
  /**
   * The first parts' size; FIRST_PART_BYTES by default. At least MIN_PART_BYTES against S3 (tests
   * against an in-memory target may go lower to see many parts).
   */
  readonly firstPartBytes?: number;
}

/** What was written. */
export interface WrittenObject {
  readonly key: string;
  readonly bytes: number;
  /** 0 when the object was small enough for one PutObject. */
  readonly parts: number;
}

export class MultipartWriter {
  readonly #target: MultipartTarget;
  readonly #firstPartBytes: number;
  /** The part being filled: grown by doubling up to the part's size, and reused for the next part. */
  #part = Buffer.allocUnsafe(64 * 1024);
  #buffered = 0;
  #uploadId: string | undefined;
  readonly #parts: { PartNumber: number; ETag: string }[] = [];
  #bytes = 0;
  #state: 'open' | 'ended' | 'aborted' = 'open';

  constructor(target: MultipartTarget) {
    this.#target = target;
    this.#firstPartBytes = target.firstPartBytes ?? FIRST_PART_BYTES;
  }

  /** Bytes written so far (buffered or uploaded). */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Adds bytes to the object. They are copied into the part being filled, so the chunk is free
   * again at once. Resolves once they are buffered, after uploading each part they filled: await
   * it before writing more.
   */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.#state !== 'open') throw new Error(`write after the object was ${this.#state}`);
    try {
      let offset = 0;
      while (offset < chunk.byteLength) {
        const partSize = partBytes(this.#parts.length + 1, this.#firstPartBytes);
        const taken = Math.min(chunk.byteLength - offset, partSize - this.#buffered);
        this.#reserve(this.#buffered + taken, partSize);
        this.#part.set(chunk.subarray(offset, offset + taken), this.#buffered);
        this.#buffered += taken;
        this.#bytes += taken;
        offset += taken;
        if (this.#buffered === partSize) await this.#uploadPart();
      }
    } catch (error) {
      await this.abort();
      throw error;
    }
  }

  /** Uploads what is buffered and completes the object. */
  async end(): Promise<WrittenObject> {
    if (this.#state !== 'open') throw new Error(`end after the object was ${this.#state}`);
    try {
      if (this.#uploadId === undefined) {
        const body = this.#part.subarray(0, this.#buffered);
        await this.#target.s3.send(new PutObjectCommand({ ...this.#objectFields(), Body: body, ContentLength: body.byteLength }));
        this.#finish('ended');
        return { key: this.#target.key, bytes: this.#bytes, parts: 0 };
      }
      // The last part may be smaller than S3's minimum. Nothing is left over when the object ended
      // exactly at a part's end: that part, already uploaded, is the last.
      if (this.#buffered > 0) await this.#uploadPart();
      await this.#target.s3.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.#target.bucketName,
          Key: this.#target.key,
          UploadId: this.#uploadId,
          MultipartUpload: { Parts: this.#parts },
        }),
      );
      this.#finish('ended');
      return { key: this.#target.key, bytes: this.#bytes, parts: this.#parts.length };
    } catch (error) {
      await this.abort();
      throw error;
    }
  }

  /** Gives the object up: nothing of it is left (best effort; the lifecycle rule catches the rest). */
  async abort(): Promise<void> {
    if (this.#state !== 'open') return;
    this.#finish('aborted');
    if (this.#uploadId === undefined) return;
    try {
      await this.#target.s3.send(new AbortMultipartUploadCommand({ Bucket: this.#target.bucketName, Key: this.#target.key, UploadId: this.#uploadId }));
    } catch (error) {
      // The parts stay until the bucket's abort-incomplete-uploads rule removes them; the object never appears.
      logger.warn('aborting a multipart upload failed', { key: this.#target.key, ...errorFields(error) });
    }
  }

  #finish(state: 'ended' | 'aborted'): void {
    this.#state = state;
    this.#part = Buffer.alloc(0);
    this.#buffered = 0;
  }

  #objectFields() {
    const { bucketName, key, contentType, contentDisposition } = this.#target;
    return { Bucket: bucketName, Key: key, ContentType: contentType, ...(contentDisposition !== undefined && { ContentDisposition: contentDisposition }) };
  }

  /** Room for `needed` bytes in the part buffer, doubling it, never beyond the part's size. */
  #reserve(needed: number, partSize: number): void {
    if (needed <= this.#part.byteLength) return;
    let capacity = Math.max(this.#part.byteLength, 64 * 1024);
    while (capacity < needed) capacity *= 2;
    const grown = Buffer.allocUnsafe(Math.min(capacity, partSize));
    this.#part.copy(grown, 0, 0, this.#buffered);
    this.#part = grown;
  }

  /** Uploads the buffered bytes as the next part; the buffer is filled again from its start. */
  async #uploadPart(): Promise<void> {
    if (this.#parts.length === MAX_PARTS) throw new Error(`${this.#target.key}: more than S3's ${MAX_PARTS} parts`);
    if (this.#uploadId === undefined) {
      const created = await this.#target.s3.send(new CreateMultipartUploadCommand(this.#objectFields()));
      if (!created.UploadId) throw new Error('CreateMultipartUpload answered no UploadId');
      this.#uploadId = created.UploadId;
    }
    const body = this.#part.subarray(0, this.#buffered);
    const PartNumber = this.#parts.length + 1;
    const { ETag } = await this.#target.s3.send(
      new UploadPartCommand({ Bucket: this.#target.bucketName, Key: this.#target.key, UploadId: this.#uploadId, PartNumber, Body: body, ContentLength: body.byteLength }),
    );
    if (!ETag) throw new Error(`UploadPart ${PartNumber} answered no ETag`);
    this.#parts.push({ PartNumber, ETag });
    // The SDK is done with the body once send resolved: the buffer is reused for the next part.
    this.#buffered = 0;
  }
}
