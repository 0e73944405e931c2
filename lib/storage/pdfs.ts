/**
 * Stored PDFs: the file in S3 under its retention prefix, and its record in DynamoDB.
 *
 * A PDF is stored whole or not at all: object and record together, or neither.
 */
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const ENTITY = 'PDF';
const DAY_MS = 86_400_000;

export interface PdfStore {
  readonly dynamo: DynamoDBDocumentClient;
  readonly s3: S3Client;
  readonly tableName: string;
  readonly bucketName: string;
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
}

/** The S3 prefix whose lifecycle rule deletes objects after `days` days. */
export function retentionPrefix(days: number): string {
  return `retention/${days}d/`;
}

export async function storePdf(
  store: PdfStore,
  input: Omit<PdfRecord, 'objectKey' | 'expiresAt' | 'size'> & { bytes: Uint8Array; retentionDays: number },
): Promise<PdfRecord> {
  const { bytes, retentionDays, ...fields } = input;
  const record: PdfRecord = {
    ...fields,
    objectKey: `${retentionPrefix(retentionDays)}${fields.keyId}/${fields.id}.pdf`,
    size: bytes.byteLength,
    expiresAt: new Date(Date.parse(fields.createdAt) + retentionDays * DAY_MS).toISOString(),
  };
  // Object and record are written at once: nobody knows the id until both are stored, so no one can
  // observe one without the other. If either write fails, the other is undone and nothing is kept.
  const [object, item] = await Promise.allSettled([
    store.s3.send(
      new PutObjectCommand({
        Bucket: store.bucketName,
        Key: record.objectKey,
        Body: bytes,
        ContentType: 'application/pdf',
        ContentDisposition: `inline; filename="${record.id}.pdf"`,
      }),
    ),
    store.dynamo.send(
      new PutCommand({
        TableName: store.tableName,
        Item: {
          pk: `${ENTITY}#${record.id}`,
          sk: ENTITY,
          ...record,
          // The record outlives the link by a day so that late clicks get 410 rather than 404.
          ttl: Math.ceil((Date.parse(record.expiresAt) + DAY_MS) / 1000),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  ]);
  if (object.status === 'rejected' || item.status === 'rejected') {
    await Promise.allSettled([
      object.status === 'fulfilled' && store.s3.send(new DeleteObjectCommand({ Bucket: store.bucketName, Key: record.objectKey })),
      item.status === 'fulfilled' &&
        store.dynamo.send(new DeleteCommand({ TableName: store.tableName, Key: { pk: `${ENTITY}#${record.id}`, sk: ENTITY } })),
    ]);
    throw object.status === 'rejected' ? object.reason : (item as PromiseRejectedResult).reason;
  }
  return record;
}

export async function getPdfRecord(store: PdfStore, id: string): Promise<PdfRecord | undefined> {
  const { Item } = await store.dynamo.send(
    new GetCommand({ TableName: store.tableName, Key: { pk: `${ENTITY}#${id}`, sk: ENTITY }, ConsistentRead: true }),
  );
  if (!Item) return undefined;
  const { pk: _pk, sk: _sk, ttl: _ttl, ...record } = Item;
  return record as PdfRecord;
}

/** Removes the record first, so the link dies at once even if the object removal fails. */
export async function deletePdf(store: PdfStore, record: PdfRecord): Promise<void> {
  await store.dynamo.send(new DeleteCommand({ TableName: store.tableName, Key: { pk: `${ENTITY}#${record.id}`, sk: ENTITY } }));
  await store.s3.send(new DeleteObjectCommand({ Bucket: store.bucketName, Key: record.objectKey }));
}

/** A short-lived S3 URL for the object, for the download link's redirect. */
export function presignPdfDownload(store: PdfStore, record: PdfRecord, ttlSeconds: number): Promise<string> {
  return getSignedUrl(store.s3, new GetObjectCommand({ Bucket: store.bucketName, Key: record.objectKey }), {
    expiresIn: ttlSeconds,
  });
}
