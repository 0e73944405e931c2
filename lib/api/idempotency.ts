/**
 * `Idempotency-Key` on `POST /v1/pdf/generate` and `POST /v1/pdf/batch` (shared/spec/beyond.md), and
 * on `POST /v1/pdf/bulk` (our own addition: a retried submission is not a second job),
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
 *   with the same key runs again: a failure costs nothing and leaves nothing behind;
 * - a request that dies (a crash, kill -9) leaves an in-progress record, so a retry is 409 until it
 *   lapses: Powertools sets it to the function's time left when the request started (at most the
 *   API function's timeout, 30 s; locally the same). Then the retry runs, and finishes the dead
 *   run's work rather than doing it again: the request's PDF ids derive from a seed kept with the
 *   key (`requestSeed`), so it adopts the PDFs the dead run stored and makes only the rest
 *   (lib/api/earlier-runs.ts, which says why each is charged once);
 * - a replay answers the first response as it is now: a job's current status, and 410 `pdf_gone`
 *   (a batch item `PDF_GONE`) for a PDF deleted since (lib/api/earlier-runs.ts);
 * - the header sent twice is 400: which of two keys the client meant cannot be guessed.
 *
 * A response too large for a DynamoDB item (400 KB: a batch of 100 items with large `metadata`) is
 * kept in the bucket under `IDEMPOTENT_BODY_PREFIX` and the record points to it; otherwise storing
 * the result would fail after the work was done and charged, and the retry would charge again.
 *
 * Replays pass the rate limit like any request (it runs before this), as Stripe's do.
 */
import { createHash } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { dynamo, oncePerEndpoint, s3 } from '#lib/aws/clients.ts';
import { pdfStore } from '#lib/aws/stores.ts';
import { errorFields, logger } from '#lib/observability/logger.ts';
import { derivedBase62, randomBase62 } from '#lib/random.ts';
import { settings } from '#lib/settings.ts';
import { IDEMPOTENCY_TABLE, IDEMPOTENCY_WINDOW_SECONDS, IDEMPOTENT_BODY_PREFIX } from '#lib/storage/idempotency-store.ts';
import { refreshReplay } from './earlier-runs.ts';
import { headerValues } from './http.ts';
import type { Idempotency, RequestIds } from './middlewares.ts';
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

/** The `Idempotency-Key` the request sent, checked; undefined when it sent none. Sent twice, it is 400. */
export function idempotencyKeyOf(event: Parameters<typeof headerValues>[0]): string | undefined {
  const values = headerValues(event, IDEMPOTENCY_HEADER);
  if (values.length > 1) throw invalidRequest(`Send one ${IDEMPOTENCY_HEADER} header: this request has ${values.length}.`);
  const [value] = values;
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

/** The request as compared between runs: path and body, object keys in order, hashed. */
function requestHash(request: IdempotentRequest['request']): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (typeof value !== 'object' || value === null) return value;
    const object = value as Record<string, unknown>;
    return Object.fromEntries(Object.keys(object).sort().map((name) => [name, canonical(object[name])]));
  };
  return createHash('sha256').update(JSON.stringify(canonical(request))).digest('hex');
}

/**
 * The seed a request's ids derive from (`pdf_`/`job_` + HMAC of the seed and a label), kept in
 * the idempotency table beside Powertools' record (`seed#<hash of key id and Idempotency-Key>`), and
 * read by every run of the same request within the window, so a run after one that died gives its
 * PDFs and its job the same ids. A new request under the key (another body, or the same one past the window)
 * gets a new seed: it never adopts another request's PDFs. Powertools' lock lets one run at a time
 * in here, so a plain read and write will do.
 */
async function requestSeed(keyId: string, idempotencyKey: string, request: IdempotentRequest['request'], now = Date.now()): Promise<string> {
  const id = `seed#${createHash('sha256').update(JSON.stringify([keyId, idempotencyKey])).digest('hex')}`;
  const hash = requestHash(request);
  const tableName = settings.idempotencyTableName;
  const { Item } = await dynamo().send(new GetCommand({ TableName: tableName, Key: { [IDEMPOTENCY_TABLE.partitionKey]: id }, ConsistentRead: true }));
  if (Item && Item.request === hash && typeof Item.seed === 'string' && Number(Item.created) > now - IDEMPOTENCY_WINDOW_SECONDS * 1000) {
    return Item.seed;
  }
  const seed = randomBase62(32);
  await dynamo().send(
    new PutCommand({
      TableName: tableName,
      Item: {
        [IDEMPOTENCY_TABLE.partitionKey]: id,
        seed,
        request: hash,
        created: now,
        // Past the window, and a day more for a retry that starts just before it closes.
        [IDEMPOTENCY_TABLE.ttlAttribute]: Math.floor(now / 1000) + 2 * IDEMPOTENCY_WINDOW_SECONDS,
      },
    }),
  );
  return seed;
}

/**
 * Runs `respond` once per (API key, Idempotency-Key) within the window and answers its response to
 * every repeat, as it is now (refreshReplay); without a key, simply runs it.
 */
export async function idempotently(
  scope: { keyId: string; idempotencyKey: string | undefined; path: string; body: unknown; context: Context },
  respond: (requestIds?: () => Promise<RequestIds>) => Promise<APIGatewayProxyResult>,
): Promise<APIGatewayProxyResult> {
  const { keyId, idempotencyKey, path, body, context } = scope;
  if (idempotencyKey === undefined) return respond();

  // Read only by a request that goes on to make something, once.
  let seed: Promise<string> | undefined;
  const requestIds = async (): Promise<RequestIds> => {
    const known = await (seed ??= requestSeed(keyId, idempotencyKey, { path, body }));
    return { pdfId: (label) => 'pdf_' + derivedBase62(known, label, 24), jobId: () => 'job_' + derivedBase62(known, 'job', 24) };
  };
  // This execution's own answer, so the first caller gets it as produced (not read back).
  let fresh: APIGatewayProxyResult | undefined;
  const run = makeIdempotent(
    async (_request: IdempotentRequest, _context: Context): Promise<KeptResponse> => {
      fresh = await respond(requestIds);
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
  return fresh ?? refreshReplay(pdfStore(), keyId, await restore(kept));
}

/** `Idempotency-Key` as generate and batch honour it: what they pass to apiHandler as `idempotent`. */
export const byIdempotencyKey: Idempotency = ({ apiKey, event, body, context }, respond) =>
  idempotently({ keyId: apiKey.keyId, idempotencyKey: idempotencyKeyOf(event), path: event.path, body, context }, respond);
