/**
 * The one DynamoDB table's shape, shared by the CDK stack and the local stack so the two cannot drift.
 *
 * Single-table layout (pk / sk):
 *   APIKEY#<sha256 of key>  / APIKEY   an API key (looked up by the hash of the presented key)
 *   PDF#<pdf id>            / PDF      a generated PDF's record
 *   QUOTA#<key id>          / YYYY-MM  a key's month counter and its open reservations
 *   RATE#<key id>           / <epoch>  a key's rate-limit window (`job-polls#<epoch>`: its job polls', `previews#<epoch>`: its template previews')
 *   JOB#<job id>            / JOB      an asynchronous job (lib/jobs/job-records.ts)
 *   WEBHOOK#<webhook id>    / WEBHOOK  a webhook delivery (lib/webhooks/deliveries.ts)
 *   TEMPLATE#<template id>  / TEMPLATE a stored template's head; / V#<version> its versions (lib/storage/templates.ts)
 *   TEMPLATES#<key id>      / SLOTS    a key's live templates, for its tier's count limit
 *   SIGNINGKEY#<id>         / SIGNINGKEY  a signing key (lib/signatures/signing-keys.ts); SIGNINGKEYS#<key id> / COUNT its count
 * Index `byEntity` (gsi1pk / gsi1sk) lists one kind of item: API keys by key id (APIKEY), a key's
 * PDFs by creation time (PDF#<key id>), a key's templates and signing keys by creation time (TEMPLATE#<key id>, SIGNINGKEY#<key id>;
 * lib/storage/owner-listing.ts), the month counters by month (QUOTA), unfinished jobs by
 * creation time (JOB_PENDING), webhook deliveries by when they are due (WEBHOOK_DUE).
 * Items that should disappear by themselves carry `ttl` (epoch seconds).
 */
export const TABLE_KEYS = { partitionKey: 'pk', sortKey: 'sk' } as const;
export const TTL_ATTRIBUTE = 'ttl';
export const ENTITY_INDEX = { name: 'byEntity', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' } as const;
