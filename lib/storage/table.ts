/**
 * The one DynamoDB table's shape, shared by the CDK stack and the local stack so the two cannot drift.
 *
 * Single-table layout (pk / sk):
 *   APIKEY#<sha256 of key>  / APIKEY   an API key (looked up by the hash of the presented key)
 *   PDF#<pdf id>            / PDF      a generated PDF's record
 * Index `byEntity` (gsi1pk / gsi1sk) lists one kind of item, e.g. all API keys by key id.
 * Items that should disappear by themselves carry `ttl` (epoch seconds).
 */
export const TABLE_KEYS = { partitionKey: 'pk', sortKey: 'sk' } as const;
export const TTL_ATTRIBUTE = 'ttl';
export const ENTITY_INDEX = { name: 'byEntity', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' } as const;
