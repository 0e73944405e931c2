/**
 * Mends what dynalite leaves half-written when the local stack is killed mid-write.
 *
 * DynamoDB updates an item and its index entries as one; dynalite writes the index entries first
 * and the item after, so a `kill -9` in between leaves an index entry for an item that was never
 * written (measured: a PDF listed through the index whose record could not be read, 1 in about 50
 * PDFs over 22 kills). AWS never shows this, so the service does not guard against it; the local
 * stack mends it at start-up, before anything reads the index, as AWS would have had it: a PDF
 * record whose file is stored is completed from its index entry (which holds the whole record);
 * one whose file is not is dropped, with its index entry.
 */
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { DeleteCommand, GetCommand, paginateScan, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ENTITY_INDEX } from '#lib/storage/table.ts';

export interface TornWritesReport {
  /** Records completed from their index entry: their file was stored. */
  readonly completed: number;
  /** Index entries dropped: their record was never written and its file is not there either. */
  readonly dropped: number;
}

async function objectExists(s3: S3Client, bucket: string, key: unknown): Promise<boolean> {
  if (typeof key !== 'string') return false;
  try {
    await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch {
    return false;
  }
}

export async function mendTornPdfRecords(
  stores: { dynamo: DynamoDBDocumentClient; s3: S3Client; tableName: string; bucketName: string },
): Promise<TornWritesReport> {
  let completed = 0;
  let dropped = 0;
  for await (const page of paginateScan({ client: stores.dynamo }, { TableName: stores.tableName, IndexName: ENTITY_INDEX.name })) {
    for (const entry of page.Items ?? []) {
      if (entry.sk !== 'PDF') continue;
      const key = { pk: entry.pk, sk: entry.sk };
      const { Item } = await stores.dynamo.send(new GetCommand({ TableName: stores.tableName, Key: key, ConsistentRead: true }));
      if (Item) continue;
      if (await objectExists(stores.s3, stores.bucketName, entry.objectKey)) {
        await stores.dynamo.send(new PutCommand({ TableName: stores.tableName, Item: entry, ConditionExpression: 'attribute_not_exists(pk)' }));
        completed++;
      } else {
        // Writing the item and deleting it makes dynalite drop its index entry with it.
        await stores.dynamo.send(new PutCommand({ TableName: stores.tableName, Item: entry }));
        await stores.dynamo.send(new DeleteCommand({ TableName: stores.tableName, Key: key }));
        dropped++;
      }
    }
  }
  return { completed, dropped };
}
