/**
 * One page of an owner's items of one kind on the byEntity index (./table.ts), newest first: their
 * index sort keys are `<createdAt>#<id>`. The cursor names an item, never a partition: the owner's
 * partition always comes from the caller's key. (A key's PDFs are listed in ./pdfs.ts with a filter
 * on top: deleted and expired records are skipped, so a page may take several reads.)
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ENTITY_INDEX } from './table.ts';

/** Where a listing continues: the last item of the previous page. */
export interface OwnerListCursor {
  readonly createdAt: string;
  readonly id: string;
}

export async function listNewestFirst<T extends OwnerListCursor>(
  store: { readonly dynamo: DynamoDBDocumentClient; readonly tableName: string },
  kind: {
    /** The owner's partition on the index (e.g. `TEMPLATE#<key id>`). */
    readonly partition: string;
    /** The table key of the item with this id (the start key must name it). */
    readonly itemKey: (id: string) => Record<string, unknown>;
    readonly read: (item: Record<string, unknown>) => T;
  },
  page: { readonly limit: number; readonly after?: OwnerListCursor | undefined },
): Promise<{ items: T[]; next?: OwnerListCursor }> {
  const result = await store.dynamo.send(
    new QueryCommand({
      TableName: store.tableName,
      IndexName: ENTITY_INDEX.name,
      KeyConditionExpression: '#p = :owner',
      ExpressionAttributeNames: { '#p': ENTITY_INDEX.partitionKey },
      ExpressionAttributeValues: { ':owner': kind.partition },
      ScanIndexForward: false,
      Limit: page.limit,
      ...(page.after && {
        ExclusiveStartKey: {
          ...kind.itemKey(page.after.id),
          [ENTITY_INDEX.partitionKey]: kind.partition,
          [ENTITY_INDEX.sortKey]: `${page.after.createdAt}#${page.after.id}`,
        },
      }),
    }),
  );
  const items = (result.Items ?? []).map(kind.read);
  const last = items.at(-1);
  return { items, ...(result.LastEvaluatedKey && last && { next: { createdAt: last.createdAt, id: last.id } }) };
}
