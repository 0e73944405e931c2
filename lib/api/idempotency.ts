/**
 * `Idempotency-Key` on `POST /v1/pdf/generate` and `POST /v1/pdf/batch` (shared/spec/beyond.md),
 * done the way Stripe does it, on Powertools' idempotency utility and its DynamoDB persistence:
 *
 * - the key is scoped to the API key: the record's id hashes (key id, Idempotency-Key), so two
 *   customers' keys never meet;
 * - the same key with the same request (path and JSON body, key order aside) within 24 hours answers
 *   the first response, status and ids included, marked `Idempotent-Replayed: true`, and runs nothing:
 *   nothing is rendered or charged again;
 * - the same key with another request is 422 `idempotency_key_reused`; while the first is still
 *   running, 409 `request_in_progress`;
 * - only a success is kept. A request that fails (any error answer) deletes its record, so a retry
 *   with the same key runs again: a failure costs nothing and leaves nothing behind. A request that
 *   dies (a crash) leaves an in-progress record that lapses when its function's time is up.
 *
 * A response too large for a DynamoDB item (400 KB: a batch of 100 items with large `metadata`) is
 * kept in the bucket under `IDEMPOTENT_BODY_PREFIX` and the record points to it; otherwise storing
 * the result would fail after the work was done and charged, and the retry would charge again.
 *
 * Replays pass the rate limit like any request (it runs before this), as Stripe's do.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { oncePerEndpoint, s3 } from '#lib/aws/clients.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { randomBase62 } from '#lib/random.ts';
import { settings } from '#lib/settings.ts';
import { IDEMPOTENCY_TABLE, IDEMPOTENCY_WINDOW_SECONDS, IDEMPOTENT_BODY_PREFIX } from '#lib/storage/idempotency-store.ts';
import { header } from './http.ts';
import type { Idempotency } from './middlewares.ts';
import { ApiError, invalidRequest } from './errors.ts';
import { IDEMPOTENCY_HEADER, idempotencyKeySchema, REPLAYED_HEADER } from './idempotency-key.ts';

/** Above this a response body goes to the bucket: a DynamoDB item holds 400 KB, attributes and hashes included. */
const LARGEST_BODY_IN_RECORD = 256 * 1024;

/** What the record holds: the answer, or where its body is when it is too large. */
interface KeptResponse {
  readonly statusCode: number;
  readonly headers?: APIGatewayProxyResult['headers'];
  readonly body?: string;
  readonly bodyObject?: string;
}

/** What is hashed: the id from the scope and the key, the validation hash from the request itself. */
interface IdempotentRequest {
  readonly keyId: string;
  readonly idempotencyKey: string;
  readonly request: { readonly path: string; readonly body: unknown };
}

const persistence = oncePerEndpoint(
  'AWS_ENDPOINT_URL_DYNAMODB',
  () => new DynamoDBPersistenceLayer({ tableName: settings.idempotencyTableName, keyAttr: IDEMPOTENCY_TABLE.partitionKey, expiryAttr: IDEMPOTENCY_TABLE.ttlAttribute }),
);

/** The `Idempotency-Key` the request sent, checked; undefined when it sent none. */
export function idempotencyKeyOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const parsed = idempotencyKeySchema.safeParse(value);
  if (!parsed.success) throw invalidRequest(parsed.error.issues[0]!.message);
  return parsed.data;
}

async function keep(response: APIGatewayProxyResult, keyId: string): Promise<KeptResponse> {
  if (Buffer.byteLength(response.body, 'utf8') <= LARGEST_BODY_IN_RECORD) return response;
  const bodyObject = `${IDEMPOTENT_BODY_PREFIX}${keyId}/${randomBase62(24)}.json`;
  await s3().send(new PutObjectCommand({ Bucket: settings.bucketName, Key: bodyObject, Body: response.body, ContentType: 'application/json' }));
  return { statusCode: response.statusCode, headers: response.headers, bodyObject };
}

async function restore(kept: KeptResponse): Promise<APIGatewayProxyResult> {
  const { bodyObject, body, ...rest } = kept;
  if (bodyObject === undefined) return { ...rest, body: body ?? '' };
  const object = await s3().send(new GetObjectCommand({ Bucket: settings.bucketName, Key: bodyObject }));
  return { ...rest, body: (await object.Body?.transformToString('utf8')) ?? '' };
}

/**
 * Runs `respond` once per (API key, Idempotency-Key) within the window and answers its response to
 * every repeat; without a key, simply runs it.
 */
export async function idempotently(
  scope: { keyId: string; idempotencyKey: string | undefined; path: string; body: unknown; context: Context },
  respond: () => Promise<APIGatewayProxyResult>,
): Promise<APIGatewayProxyResult> {
  const { keyId, idempotencyKey, path, body, context } = scope;
  if (idempotencyKey === undefined) return respond();

  // This execution's own answer, so the first caller gets it as produced (not read back).
  let fresh: APIGatewayProxyResult | undefined;
  const run = makeIdempotent(
    async (_request: IdempotentRequest, _context: Context): Promise<KeptResponse> => {
      fresh = await respond();
      return keep(fresh, keyId);
    },
    {
      persistenceStore: persistence(),
      keyPrefix: 'request',
      config: new IdempotencyConfig({
        eventKeyJmesPath: '[keyId, idempotencyKey]',
        payloadValidationJmesPath: 'request',
        expiresAfterSeconds: IDEMPOTENCY_WINDOW_SECONDS,
        hashFunction: 'sha256',
        responseHook: (response) => {
          const kept = response as unknown as KeptResponse;
          return { ...kept, headers: { ...kept.headers, [REPLAYED_HEADER]: 'true' } };
        },
      }),
    },
  );
  let kept: KeptResponse;
  try {
    kept = await run({ keyId, idempotencyKey, request: { path, body } }, context);
  } catch (error) {
    const name = (error as Error | undefined)?.name;
    if (fresh !== undefined) {
      // The work is done and charged but its record could not be completed: the caller gets its
      // answer rather than an error for a success; a repeat within the function's time limit is
      // 409, after it the record lapses.
      logger.error('keeping an idempotent response failed', errorFields(error));
      return fresh;
    }
    if (name === 'IdempotencyValidationError') {
      throw new ApiError('idempotency_key_reused', `This ${IDEMPOTENCY_HEADER} was used with another request in the last 24 hours; use a new key for a new request.`);
    }
    if (name === 'IdempotencyAlreadyInProgressError') {
      throw new ApiError('request_in_progress', `A request with this ${IDEMPOTENCY_HEADER} is still running; retry once it has answered.`);
    }
    throw error;
  }
  return fresh ?? restore(kept);
}

/** `Idempotency-Key` as generate and batch honour it: what they pass to apiHandler as `idempotent`. */
export const byIdempotencyKey: Idempotency = ({ apiKey, event, body, context }, respond) =>
  idempotently({ keyId: apiKey.keyId, idempotencyKey: idempotencyKeyOf(header(event, IDEMPOTENCY_HEADER)), path: event.path, body, context }, respond);
