/**
 * What the local stack has stored for a key, read from the stores themselves (S3 and DynamoDB
 * stand-ins), not through the API: the check that a refused request left nothing behind, and that a
 * template's saves and deletes left exactly what they should.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { inject } from 'vitest';
import type { StackInfo } from '#lib/local/stack-info.ts';

/** Clients of the local stack's own S3 and DynamoDB, as its data directory describes them. */
async function stackStores() {
  const info = JSON.parse(await readFile(join(inject('dataDir'), 'stack.json'), 'utf8')) as StackInfo;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  const s3 = new S3Client({ endpoint: info.s3Endpoint, region: info.region, credentials, forcePathStyle: true });
  const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: info.dynamodbEndpoint, region: info.region, credentials }));
  return {
    info,
    s3,
    dynamo,
    destroy() {
      s3.destroy();
      dynamo.destroy();
    },
  };
}

/**
 * What the stores hold of one template: the objects under its prefix of the bucket (the bodies too
 * large for their record, `templates/<key id>/<template id>/`), and the numbers of its version records.
 */
export async function storedTemplate(keyId: string, templateId: string): Promise<{ objects: string[]; versions: number[] }> {
  const { info, s3, dynamo, destroy } = await stackStores();
  try {
    const objects: string[] = [];
    let continuationToken: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: info.bucketName, Prefix: `templates/${keyId}/${templateId}/`, ContinuationToken: continuationToken }));
      for (const { Key } of page.Contents ?? []) objects.push(Key!);
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken);

    const versions: number[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.send(
        new QueryCommand({
          TableName: info.tableName,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :v)',
          ExpressionAttributeValues: { ':pk': `TEMPLATE#${templateId}`, ':v': 'V#' },
          ExclusiveStartKey: startKey,
          ConsistentRead: true,
        }),
      );
      for (const item of page.Items ?? []) versions.push(Number(String(item.sk).slice(2)));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return { objects: objects.sort(), versions: versions.sort((a, b) => a - b) };
  } finally {
    destroy();
  }
}

/** The ids of the PDF objects in S3 and of the PDF records in DynamoDB that belong to `keyId`. */
export async function storedPdfs(keyId: string): Promise<{ objects: string[]; records: string[] }> {
  const { info, s3, dynamo, destroy } = await stackStores();
  try {
    const objects: string[] = [];
    let continuationToken: string | undefined;
    do {
      // Under the PDFs' prefix only: s3rver lists by walking its directories, and fails the whole
      // listing (500) when another test's deletes remove one under it meanwhile (stored templates'
      // saves and DELETEs, under templates/).
      const page = await s3.send(new ListObjectsV2Command({ Bucket: info.bucketName, Prefix: 'retention/', ContinuationToken: continuationToken }));
      for (const { Key } of page.Contents ?? []) {
        // retention/<days>d/<key id>/<pdf id>.pdf (lib/storage/pdfs.ts)
        const match = Key?.match(/\/([^/]+)\/(pdf_[^/]+)\.pdf$/);
        if (match?.[1] === keyId) objects.push(match[2]!);
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken);

    const records: string[] = [];
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.send(
        new ScanCommand({
          TableName: info.tableName,
          FilterExpression: '#sk = :entity AND #keyId = :keyId',
          ExpressionAttributeNames: { '#sk': 'sk', '#keyId': 'keyId' },
          ExpressionAttributeValues: { ':entity': 'PDF', ':keyId': keyId },
          ExclusiveStartKey: startKey,
          ConsistentRead: true,
        }),
      );
      for (const item of page.Items ?? []) records.push(String(item.id));
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return { objects: objects.sort(), records: records.sort() };
  } finally {
    destroy();
  }
}
