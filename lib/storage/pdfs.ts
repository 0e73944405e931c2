/**
 * Stored PDFs: the file in S3 under its retention prefix, and its record in DynamoDB.
 *
 * The record is what makes a PDF exist for its customer: it is listed, linked, downloaded and
 * charged for (lib/accounts/quota.ts counts records). So the object is written first and the record
 * only once the object is safely stored: a crash in between leaves an object nobody can reach,
 * never a record pointing at nothing. Such an object is never linked and expires with its
 * retention prefix.
 *
 * Deleting a PDF deletes its object and marks its record deleted: the customer no longer sees it,
 * and it still counts for what the month cost.
 */
import type { KMSClient } from '@aws-sdk/client-kms';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { GetCommand, paginateQuery, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ENTITY_INDEX } from './table.ts';
import { attachmentDisposition } from './filenames.ts';

const ENTITY = 'PDF';
const DAY_MS = 86_400_000;

export interface PdfStore {
  readonly dynamo: DynamoDBDocumentClient;
  readonly s3: S3Client;
  readonly tableName: string;
  readonly bucketName: string;
  /** KMS, where documents are signed (lib/signatures/): the production wiring gives it (lib/aws/stores.ts). */
  readonly kms?: KMSClient;
}

export interface PdfRecord {
  readonly id: string;
  readonly keyId: string;
  readonly objectKey: string;
  readonly size: number;
  readonly pages: number;
  readonly format: string;
  readonly generationTimeMs: number;
  readonly createdAt: string;
  readonly expiresAt: string;
  /**
   * The quota reservation the PDF was made under (lib/accounts/quota.ts): what it is charged to.
   * A batch's merged file has none: it is made of PDFs already charged, and costs nothing more.
   */
  readonly reservationId?: string;
  /** For a batch's merged file: the PDFs it joins, in order. */
  readonly mergedFrom?: readonly string[];
  /** The name it downloads under (`filename`); `<id>.pdf` when the caller gave none. */
  readonly filename?: string;
  /** The stored template (and its version) it was rendered from, when it was. */
  readonly templateId?: string;
  readonly templateVersion?: number;
  /** The signing key it was signed with (lib/signatures/): the PDF carries a PAdES signature. */
  readonly signingKeyId?: string;
  /**
   * A picture (`POST /v1/image/generate`, shared/spec/beyond.md "Images and Markdown"): its media
   * type and size in pixels. Absent on a PDF (application/pdf). Pictures are records of the same
   * kind as PDFs, in the same owner partition, so they are listed, linked, revoked, counted and
   * charged by the very same code.
   */
  readonly contentType?: string;
  readonly width?: number;
  readonly height?: number;
  /** A PDF's picture of its first page (`thumbnail`), stored beside it under the same retention prefix. */
  readonly thumbnail?: StoredThumbnail;
}

export interface StoredThumbnail {
  readonly objectKey: string;
  readonly contentType: string;
  readonly width: number;
  readonly height: number;
  readonly size: number;
}

export const PDF_CONTENT_TYPE = 'application/pdf';
const EXTENSIONS: Readonly<Record<string, string>> = { 'application/pdf': 'pdf', 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

/** The media type of a record's file. */
export function contentTypeOf(record: Pick<PdfRecord, 'contentType'>): string {
  return record.contentType ?? PDF_CONTENT_TYPE;
}

/** The extension a file of this media type is saved with. */
export function extensionOf(contentType: string): string {
  const extension = EXTENSIONS[contentType];
  if (!extension) throw new Error(`no extension is known for ${contentType}`);
  return extension;
}

/** Page size of `GET /v1/pdf` when the caller gives none, and the most one page may hold. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

/** The name a PDF downloads under. */
export function downloadName(record: PdfRecord): string {
  return record.filename ?? `${record.id}.${extensionOf(contentTypeOf(record))}`;
}

/** The S3 prefix whose lifecycle rule deletes objects after `days` days. */
export function retentionPrefix(days: number): string {
  return `retention/${days}d/`;
}

const recordKey = (id: string) => ({ pk: `${ENTITY}#${id}`, sk: ENTITY });
/** The owner's PDFs in the entity index, newest last by creation time. */
const ownerPartition = (keyId: string) => `${ENTITY}#${keyId}`;

/** The record a PDF will have, before anything is stored. */
export function describePdf(
  input: Omit<PdfRecord, 'objectKey' | 'expiresAt' | 'size'> & { size: number; retentionDays: number },
): PdfRecord {
  const { retentionDays, ...fields } = input;
  return {
    ...fields,
    objectKey: `${retentionPrefix(retentionDays)}${fields.keyId}/${fields.id}.${extensionOf(contentTypeOf(fields))}`,
    expiresAt: new Date(Date.parse(fields.createdAt) + retentionDays * DAY_MS).toISOString(),
  };
}

/**
 * Writes the PDF's file. Until its record is written, nobody can reach it. A stream (a merged file,
 * lib/documents/merge.ts, read from disk) must hold exactly `record.size` bytes.
 */
export async function putPdfObject(store: PdfStore, record: PdfRecord, bytes: Uint8Array | Readable, { abortSignal }: { abortSignal?: AbortSignal } = {}): Promise<void> {
  await store.s3.send(
    new PutObjectCommand({
      Bucket: store.bucketName,
      Key: record.objectKey,
      Body: bytes,
      ...(bytes instanceof Readable && { ContentLength: record.size }),
      ContentType: contentTypeOf(record),
      // What S3 answers the download link's redirect with: saved under its download name.
      ContentDisposition: attachmentDisposition(downloadName(record)),
    }),
    { ...(abortSignal && { abortSignal }) },
  );
}

/**
 * Where a PDF's thumbnail is kept: beside its file, under the same retention prefix, so it expires
 * with it by the same lifecycle rule.
 */
export function thumbnailObjectKey(record: Pick<PdfRecord, 'objectKey'>, contentType: string): string {
  return record.objectKey.replace(/\.pdf$/, `.thumbnail.${extensionOf(contentType)}`);
}

/** Writes a PDF's thumbnail, before the PDF's record (which names it) is written. */
export async function putThumbnailObject(store: PdfStore, thumbnail: StoredThumbnail, bytes: Uint8Array): Promise<void> {
  await store.s3.send(new PutObjectCommand({ Bucket: store.bucketName, Key: thumbnail.objectKey, Body: bytes, ContentType: thumbnail.contentType }));
}

/** The PDF's file. */
export async function readPdfObject(store: PdfStore, record: PdfRecord, { abortSignal }: { abortSignal?: AbortSignal } = {}): Promise<Uint8Array> {
  const { Body } = await store.s3.send(new GetObjectCommand({ Bucket: store.bucketName, Key: record.objectKey }), { ...(abortSignal && { abortSignal }) });
  if (!Body) throw new Error(`the object of ${record.id} has no body`);
  return Body.transformToByteArray();
}

/**
 * Writes the PDF's record, once its object is stored: from then on the PDF exists for its owner.
 * Returns the record as stored: when the id is taken already by the same owner's PDF made under the
 * same reservation (an asynchronous job's ids repeat across its runs, lib/jobs/jobs.ts, and two runs
 * can race), that record, which is the one charged.
 */
export async function putPdfRecord(store: PdfStore, record: PdfRecord): Promise<PdfRecord> {
  try {
    await writeRecord(store, record);
    return record;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const existing = await getPdfRecord(store, record.id);
    if (!existing || existing.keyId !== record.keyId || existing.reservationId !== record.reservationId) throw error;
    return existing;
  }
}

async function writeRecord(store: PdfStore, record: PdfRecord): Promise<void> {
  await store.dynamo.send(
    new PutCommand({
      TableName: store.tableName,
      Item: {
        ...recordKey(record.id),
        [ENTITY_INDEX.partitionKey]: ownerPartition(record.keyId),
        [ENTITY_INDEX.sortKey]: `${record.createdAt}#${record.id}`,
        ...record,
        // The record outlives the link by a day so that late clicks get 410 rather than 404.
        ttl: Math.ceil((Date.parse(record.expiresAt) + DAY_MS) / 1000),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

/** Stores a PDF whole: its object, then its record (the one stored, see putPdfRecord). */
export async function storePdf(store: PdfStore, record: PdfRecord, bytes: Uint8Array): Promise<PdfRecord> {
  await putPdfObject(store, record, bytes);
  return putPdfRecord(store, record);
}

type StoredItem = PdfRecord & { readonly deletedAt?: string };

function asRecord(item: Record<string, unknown>): PdfRecord {
  const { pk: _pk, sk: _sk, ttl: _ttl, deletedAt: _deletedAt, [ENTITY_INDEX.partitionKey]: _p, [ENTITY_INDEX.sortKey]: _s, ...record } = item;
  return record as unknown as PdfRecord;
}

/** The PDF's record, unless it does not exist or was deleted. */
export async function getPdfRecord(store: PdfStore, id: string): Promise<PdfRecord | undefined> {
  const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: recordKey(id), ConsistentRead: true }));
  if (!Item || (Item as StoredItem).deletedAt !== undefined) return undefined;
  return asRecord(Item);
}

/**
 * The PDF's record whether or not it was deleted since: a retry of an idempotent request tells a PDF
 * its dead run stored from one the customer deleted since (lib/api/earlier-runs.ts).
 */
export async function getPdfRecordEvenDeleted(store: PdfStore, id: string): Promise<{ record: PdfRecord; deleted: boolean } | undefined> {
  const { Item } = await store.dynamo.send(new GetCommand({ TableName: store.tableName, Key: recordKey(id), ConsistentRead: true }));
  if (!Item) return undefined;
  return { record: asRecord(Item), deleted: (Item as StoredItem).deletedAt !== undefined };
}

/** Marks the record deleted first, so the link dies at once even if the object removal fails. */
export async function deletePdf(store: PdfStore, record: PdfRecord, now = new Date()): Promise<void> {
  await store.dynamo.send(
    new UpdateCommand({
      TableName: store.tableName,
      Key: recordKey(record.id),
      UpdateExpression: 'SET #deletedAt = :now',
      ExpressionAttributeNames: { '#deletedAt': 'deletedAt' },
      ExpressionAttributeValues: { ':now': now.toISOString() },
    }),
  );
  await store.s3.send(new DeleteObjectCommand({ Bucket: store.bucketName, Key: record.objectKey }));
  if (record.thumbnail) await store.s3.send(new DeleteObjectCommand({ Bucket: store.bucketName, Key: record.thumbnail.objectKey }));
}

/** Where a listing continues: the last record of the previous page. */
export interface ListCursor {
  readonly createdAt: string;
  readonly id: string;
}

/**
 * The owner's PDFs that can still be downloaded, newest first, `limit` at most per page. The cursor
 * names a record, never a partition: the owner's partition always comes from the caller's key.
 */
export async function listPdfs(
  store: PdfStore,
  keyId: string,
  page: { limit: number; after?: ListCursor; now: Date },
): Promise<{ records: PdfRecord[]; next?: ListCursor }> {
  const records: PdfRecord[] = [];
  let startKey: Record<string, unknown> | undefined = page.after && {
    ...recordKey(page.after.id),
    [ENTITY_INDEX.partitionKey]: ownerPartition(keyId),
    [ENTITY_INDEX.sortKey]: `${page.after.createdAt}#${page.after.id}`,
  };
  // Deleted and expired records are filtered after the read, so a page may need more than one read.
  do {
    const result = await store.dynamo.send(
      new QueryCommand({
        TableName: store.tableName,
        IndexName: ENTITY_INDEX.name,
        KeyConditionExpression: '#p = :owner',
        FilterExpression: 'attribute_not_exists(#deletedAt) AND #expiresAt > :now',
        ExpressionAttributeNames: { '#p': ENTITY_INDEX.partitionKey, '#deletedAt': 'deletedAt', '#expiresAt': 'expiresAt' },
        ExpressionAttributeValues: { ':owner': ownerPartition(keyId), ':now': page.now.toISOString() },
        ScanIndexForward: false,
        Limit: page.limit - records.length,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of result.Items ?? []) records.push(asRecord(item));
    startKey = result.LastEvaluatedKey;
  } while (startKey && records.length < page.limit);
  const last = records.at(-1);
  return { records, ...(startKey && last && { next: { createdAt: last.createdAt, id: last.id } }) };
}

/**
 * How many PDF records were written under a reservation, deleted ones included: what the
 * reservation's request really stored, and so what it costs.
 */
export async function countRecordsOf(
  store: PdfStore,
  keyId: string,
  reservationId: string,
  createdBetween: { from: Date; to: Date },
): Promise<number> {
  let count = 0;
  const pages = paginateQuery(
    { client: store.dynamo },
    {
      TableName: store.tableName,
      IndexName: ENTITY_INDEX.name,
      KeyConditionExpression: '#p = :owner AND #s BETWEEN :from AND :to',
      FilterExpression: '#reservation = :reservation',
      ExpressionAttributeNames: { '#p': ENTITY_INDEX.partitionKey, '#s': ENTITY_INDEX.sortKey, '#reservation': 'reservationId' },
      ExpressionAttributeValues: {
        ':owner': ownerPartition(keyId),
        ':from': createdBetween.from.toISOString(),
        // Sort keys are `<createdAt>#<id>`: '~' sorts after every character of an id.
        ':to': `${createdBetween.to.toISOString()}~`,
        ':reservation': reservationId,
      },
      Select: 'COUNT',
    },
  );
  for await (const page of pages) count += page.Count ?? 0;
  return count;
}

/**
 * Where presigned download URLs point (scheme, host and port), for a page's Content-Security-Policy:
 * a URL presigned for a key that need not exist, signed locally, never sent.
 */
export async function downloadOrigin(store: Pick<PdfStore, 's3' | 'bucketName'>): Promise<string> {
  return new URL(await getSignedUrl(store.s3, new GetObjectCommand({ Bucket: store.bucketName, Key: 'origin' }), { expiresIn: 60 })).origin;
}

/**
 * CORS on the bucket, so a web page (the playground) can read a PDF it has a presigned URL for:
 * GET only, from any origin, never with credentials. A presigned URL already lets whoever holds it
 * fetch the file for a minute; CORS only lets a browser page read what it could download anyway.
 * The CDK stack and the local stack both apply this one rule.
 */
export const DOWNLOAD_CORS_RULE = { allowedMethods: ['GET'], allowedOrigins: ['*'], maxAgeSeconds: 3600 } as const;

/** A short-lived S3 URL for the object (or its thumbnail's), for the download link's redirect. */
export function presignPdfDownload(store: PdfStore, record: PdfRecord, ttlSeconds: number, part: 'file' | 'thumbnail' = 'file'): Promise<string> {
  const key = part === 'thumbnail' ? record.thumbnail?.objectKey : record.objectKey;
  if (key === undefined) throw new Error(`${record.id} has no thumbnail`);
  return getSignedUrl(store.s3, new GetObjectCommand({ Bucket: store.bucketName, Key: key }), {
    expiresIn: ttlSeconds,
  });
}
