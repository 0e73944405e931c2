/**
 * The API's routes: read by the CDK stack (API Gateway resources and methods) and by the local
 * HTTP adapter, so the deployed API and the local one cannot drift apart.
 *
 * `handler` names a file in functions/ (and the Lambda function built from it).
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Route {
  readonly method: HttpMethod;
  /** API Gateway resource path, with `{name}` path parameters. */
  readonly path: string;
  readonly handler: FunctionName;
}

/** Every API-facing Lambda function, by the name of its file in functions/. */
export const API_FUNCTIONS = ['health', 'generate', 'batch', 'files', 'pdfs', 'jobs', 'usage', 'bulk', 'uploads', 'templates', 'preview', 'signingKeys', 'site', 'fallback'] as const;
export type FunctionName = (typeof API_FUNCTIONS)[number];

/** Functions invoked by other functions, or on a schedule, rather than through the API. */
export const INTERNAL_FUNCTIONS = ['render', 'job', 'webhooks', 'reconcile', 'bulkWorker'] as const;
export type InternalFunctionName = (typeof INTERNAL_FUNCTIONS)[number];

/** Pictures (shared/spec/beyond.md "Images and Markdown"): served by the generate function, which tells the two apart by this path. */
export const IMAGE_GENERATE_PATH = '/v1/image/generate';

export const ROUTES: readonly Route[] = [
  { method: 'GET', path: '/health', handler: 'health' },
  { method: 'POST', path: '/v1/pdf/generate', handler: 'generate' },
  { method: 'POST', path: IMAGE_GENERATE_PATH, handler: 'generate' },
  { method: 'POST', path: '/v1/pdf/batch', handler: 'batch' },
  { method: 'GET', path: '/v1/pdf', handler: 'pdfs' },
  { method: 'GET', path: '/v1/pdf/{id}', handler: 'pdfs' },
  { method: 'DELETE', path: '/v1/pdf/{id}', handler: 'pdfs' },
  { method: 'GET', path: '/v1/files/{id}', handler: 'files' },
  { method: 'GET', path: '/v1/jobs/{job_id}', handler: 'jobs' },
  // Bulk jobs (shared/spec/beyond.md "Bulk jobs"): their input, submission, cancel and result files.
  { method: 'DELETE', path: '/v1/jobs/{job_id}', handler: 'jobs' },
  { method: 'GET', path: '/v1/jobs/{job_id}/manifest', handler: 'jobs' },
  { method: 'GET', path: '/v1/jobs/{job_id}/archive', handler: 'jobs' },
  { method: 'POST', path: '/v1/uploads', handler: 'uploads' },
  { method: 'POST', path: '/v1/pdf/bulk', handler: 'bulk' },
  { method: 'GET', path: '/v1/usage', handler: 'usage' },
  // Stored templates (shared/spec/beyond.md "Templates"); previews render, so they have a browser.
  { method: 'GET', path: '/v1/templates', handler: 'templates' },
  { method: 'POST', path: '/v1/templates', handler: 'templates' },
  { method: 'GET', path: '/v1/templates/{template_id}', handler: 'templates' },
  { method: 'PUT', path: '/v1/templates/{template_id}', handler: 'templates' },
  { method: 'DELETE', path: '/v1/templates/{template_id}', handler: 'templates' },
  { method: 'POST', path: '/v1/templates/{template_id}/preview', handler: 'preview' },
  // Signing keys (shared/spec/beyond.md "Signatures"): KMS keys only their API key signs with.
  { method: 'GET', path: '/v1/signing-keys', handler: 'signingKeys' },
  { method: 'POST', path: '/v1/signing-keys', handler: 'signingKeys' },
  { method: 'GET', path: '/v1/signing-keys/{signing_key_id}', handler: 'signingKeys' },
  { method: 'DELETE', path: '/v1/signing-keys/{signing_key_id}', handler: 'signingKeys' },
  { method: 'PUT', path: '/v1/signing-keys/{signing_key_id}/certificate', handler: 'signingKeys' },
  // The developer surface (shared/spec/beyond.md): public, no key, nothing but the project's own files.
  { method: 'GET', path: '/v1/openapi.json', handler: 'site' },
  { method: 'GET', path: '/docs', handler: 'site' },
  { method: 'GET', path: '/', handler: 'site' },
  { method: 'GET', path: '/assets/{name}', handler: 'site' },
];

/**
 * What API Gateway treats as binary, both ways. A template preview answers a PDF itself (base64 from
 * Lambda, `isBase64Encoded`), which API Gateway decodes only when the request's first Accept type is
 * a binary media type: so every type is one (the pattern "any type, any subtype"), as clients send
 * an Accept of any type or of `application/pdf`. JSON
 * answers are not base64 and pass as they are; request bodies then reach the functions
 * base64-encoded (`isBase64Encoded: true`), which the body parser reads (lib/api/middlewares.ts).
 * The local gateway does the same (lib/local/gateway.ts).
 */
export const BINARY_MEDIA_TYPES: readonly string[] = ['*/*'];

/**
 * Everything no route matches goes to the fallback function, which answers 404 or 405 in the API's
 * error shape (API Gateway's own answer would be a 403 "Missing Authentication Token").
 */
export const FALLBACK_HANDLER: FunctionName = 'fallback';

/**
 * What one Lambda function needs from its deployment. The CDK stack grants exactly this and nothing
 * more (least privilege), so a function that starts using a new table or bucket operation must say
 * so here.
 */
export interface FunctionProfile {
  /** Renders with Chromium: gets the Chromium layer, Chromium-sized memory and a render-sized timeout. */
  readonly chromium?: boolean;
  /** DynamoDB operations it performs on the one table (Query: a bulk job's progress shards, lib/bulk/bulk-records.ts). */
  readonly table?: readonly ('GetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'Query')[];
  /** DynamoDB operations on the entity index (a key's PDFs: listing, counting what a reservation stored; the months' counters). */
  readonly index?: readonly 'Query'[];
  /** Serves the docs page's and the playground's files (lib/site/assets.ts), copied beside its bundle. */
  readonly siteAssets?: boolean;
  /**
   * KMS operations on signing keys (lib/signatures/signing-keys.ts), only on keys tagged with this
   * stack (`pdf-api:stack`); CreateKey only with that tag. Sign: the functions that sign documents.
   */
  readonly signingKeys?: readonly ('CreateKey' | 'TagResource' | 'GetPublicKey' | 'Sign' | 'ScheduleKeyDeletion')[];
  /** Runs on a schedule (an EventBridge rule), not through the API. */
  readonly schedule?: string;
  /** Its timeout when it is neither an API function nor a renderer: it waits for webhook receivers. */
  readonly timeoutSeconds?: number;
  /**
   * Honours Idempotency-Key (lib/api/idempotency.ts): reads and writes the idempotency table, and
   * puts and gets the responses too large for it under their own prefix of the bucket.
   */
  readonly idempotency?: boolean;
  /** S3 operations it performs on PDF objects (presigning a GET counts as GetObject). */
  readonly objects?: readonly ('GetObject' | 'PutObject' | 'DeleteObject')[];
  /**
   * S3 operations it performs on the bodies of stored templates too large for their record
   * (lib/storage/templates.ts), under their own prefix: GetObject to render from them.
   */
  readonly templateBodies?: readonly ('GetObject' | 'PutObject' | 'DeleteObject')[];
  /**
   * Lists the bucket under the template bodies' prefix only (s3:ListBucket, conditioned on
   * `s3:prefix`): deleting a template removes every body it stored, those no record names included.
   */
  readonly listsTemplateBodies?: boolean;
  /**
   * Reads stored templates and nothing else of the table: GetItem on the items whose partition key
   * is a template's (lib/storage/templates.ts TEMPLATE_KEY_PREFIX), for a function that otherwise
   * has no use for the table.
   */
  readonly templateReads?: boolean;
  /** Reads signing keys' records and nothing else of the table (GetItem on SIGNINGKEY# partition keys), for a function that otherwise has no use for it. */
  readonly signingKeyReads?: boolean;
  /** S3 operations it performs on the requests of asynchronous jobs (lib/jobs/job-records.ts), under their own prefix. */
  readonly jobRequests?: readonly ('GetObject' | 'PutObject' | 'DeleteObject')[];
  /** S3 operations it performs on the results too large for their job's item (lib/jobs/job-records.ts), under their own prefix. */
  readonly jobResults?: readonly ('GetObject' | 'PutObject' | 'DeleteObject')[];
  /**
   * KMS operations it performs with the key that seals job requests (lib/jobs/request-sealing.ts):
   * Encrypt to submit jobs, Decrypt to run them. It gets the key as JOB_REQUEST_KEY_ARN.
   */
  readonly jobRequestKey?: readonly ('Encrypt' | 'Decrypt')[];
  /**
   * Runs asynchronous jobs: invoked asynchronously (Lambda's retries and event age from
   * JOB_ASYNC_INVOKE, a failure destination for what it gave up on) with up to 15 minutes a run.
   */
  readonly runsJobs?: boolean;
  /** Renders the items of batch jobs too, each for up to JOB_RENDER_TIMEOUT_MS: gets the job function's 15 minutes. */
  readonly rendersJobItems?: boolean;
  /** Signs or verifies download links, so it reads the link-signing secret. */
  readonly linkSecret?: boolean;
  /**
   * Reads the job function's failure queue (an SQS event source) and ends each job Lambda gave up
   * on at once (lib/jobs/job-endings.ts), rather than when its reservation expires.
   */
  readonly endsGivenUpJobs?: boolean;
  /**
   * S3 operations it performs on bulk jobs' objects (lib/bulk/bulk-records.ts: their plan, chunk
   * results, manifest and archive) and on uploads, under their two prefixes (presigning counts;
   * PutObject covers a multipart upload's parts, AbortMultipartUpload gives up a manifest or archive).
   */
  readonly bulkObjects?: readonly ('GetObject' | 'PutObject' | 'AbortMultipartUpload')[];
  /** Removes a bulk job's upload once the job has ended (s3:DeleteObject under the uploads' prefix alone). */
  readonly removesUploads?: boolean;
  /** Puts bulk jobs' chunks, or their completions, on the bulk queue (sqs:SendMessage); it gets the queue as BULK_QUEUE_URL. */
  readonly sendsBulkChunks?: boolean;
  /** Is the bulk queue's consumer: Lambda's event source mapping invokes it with chunks (lib/bulk/bulk-worker.ts). */
  readonly bulkWorker?: boolean;
  /** Reads the bulk queue's dead-letter queue (an SQS event source) and ends each chunk every delivery failed. */
  readonly endsGivenUpChunks?: boolean;
  /** Memory, when its work needs more CPU than a light function's (Lambda's CPU grows with memory). */
  readonly memoryMb?: number;
  /** Internal functions it invokes through the Lambda API; each arrives as `<NAME>_FUNCTION_NAME`. */
  readonly invokes?: readonly InternalFunctionName[];
  /**
   * Checks that the table and the bucket answer (lib/observability/health.ts): a GetItem of the one
   * health probe key and a listing of the one empty health prefix, and nothing else of either.
   */
  readonly healthProbes?: boolean;
}

/**
 * Every Lambda function the stack deploys, API-facing or internal, with what it needs. Every
 * authenticated function reads the key (GetItem) and counts the request (UpdateItem).
 */
export const FUNCTION_PROFILES: Readonly<Record<FunctionName | InternalFunctionName, FunctionProfile>> = {
  health: { healthProbes: true },
  fallback: {},
  // Quota repair (lib/accounts/reconcile.ts) counts a reservation's records through the index.
  // `async: true` stores the job's request and the job (both removed again if it cannot be
  // queued) and invokes the job function (lib/jobs/jobs.ts).
  generate: {
    chromium: true,
    table: ['GetItem', 'UpdateItem', 'PutItem', 'DeleteItem'],
    index: ['Query'],
    objects: ['PutObject'],
    templateBodies: ['GetObject'],
    jobRequests: ['PutObject', 'DeleteObject'],
    jobRequestKey: ['Encrypt'],
    linkSecret: true,
    idempotency: true,
    invokes: ['job'],
    // Signs documents with `signature` (lib/documents/signing.ts): KMS Sign on the caller's signing key.
    signingKeys: ['Sign'],
  },
  // The batch writes the records of the items it counts as done (lib/documents/batch.ts), and
  // joins their files into one when asked to merge (lib/documents/merge.ts). Jobs as generate.
  batch: {
    table: ['GetItem', 'UpdateItem', 'PutItem', 'DeleteItem'],
    index: ['Query'],
    objects: ['GetObject', 'PutObject'],
    jobRequests: ['PutObject', 'DeleteObject'],
    jobRequestKey: ['Encrypt'],
    linkSecret: true,
    invokes: ['render', 'job'],
    idempotency: true,
  },
  // Stores the item's file only; the batch writes its record. Reads the template an item names
  // (its head and version, and its body when large) where the document is made.
  // And the signing key an item's `signature` names (its record, and KMS Sign with it).
  render: { chromium: true, rendersJobItems: true, objects: ['PutObject'], templateReads: true, templateBodies: ['GetObject'], signingKeyReads: true, signingKeys: ['Sign'] },
  // Reads the job, and its result where it is too large for the item; a bulk job's progress from its
  // shards (a GetItem each, and a Query of the job's own key, where jobs stored before kept theirs),
  // its cancel (UpdateItem), and the redirect to its manifest or archive (a presigned GET).
  jobs: { table: ['GetItem', 'UpdateItem', 'Query'], jobResults: ['GetObject'], bulkObjects: ['GetObject'] },
  // A bulk job: its input read and checked (the upload, or the inline items written out), its quota
  // reserved (repairing dead requests' first, through the index), its shared options sealed as a job
  // request, its plan and job written, its chunks queued (a job that cannot be queued fails, its
  // sealed request removed). An input of 256 MB is read within the API's 29 s on a whole vCPU (1769 MB).
  bulk: {
    table: ['GetItem', 'UpdateItem', 'PutItem'],
    index: ['Query'],
    bulkObjects: ['GetObject', 'PutObject'],
    removesUploads: true,
    jobRequests: ['PutObject', 'DeleteObject'],
    jobRequestKey: ['Encrypt'],
    sendsBulkChunks: true,
    idempotency: true,
    timeoutSeconds: 28,
    memoryMb: 1769,
  },
  // Presigns the PUT of an upload.
  uploads: { table: ['GetItem', 'UpdateItem'], bulkObjects: ['PutObject'] },
  // The bulk queue's consumer: a chunk's lines rendered and stored (records written under the job's
  // reservation), its lease, done mark and shard counts (UpdateItem), its results; the last chunk
  // asks for the job's completion on the queue, and a completion writes the manifest and archive,
  // settles the reservation, queues and tries the webhook (the key's secret read through the index,
  // made if the key has none) and records the job, removing its sealed request and its upload.
  bulkWorker: {
    chromium: true,
    bulkWorker: true,
    sendsBulkChunks: true,
    table: ['GetItem', 'PutItem', 'UpdateItem'],
    index: ['Query'],
    objects: ['PutObject'],
    // A line naming a stored template is rendered from it (lib/documents/render-item.ts).
    templateBodies: ['GetObject'],
    bulkObjects: ['GetObject', 'PutObject', 'AbortMultipartUpload'],
    removesUploads: true,
    jobRequests: ['GetObject', 'DeleteObject'],
    jobRequestKey: ['Decrypt'],
    linkSecret: true,
    signingKeys: ['Sign'],
  },
  // A job: a generate (rendered here) or a batch (fanned out to render, as the batch function
  // does), records and the merged file written, the reservation settled, the job recorded, its
  // webhook queued and tried (the key's secret read through the index, made if the key has none).
  // A result too large for the job's item is put in the bucket (removed again by a run that finds
  // the job already finished), and read back for the webhook.
  job: {
    chromium: true,
    runsJobs: true,
    table: ['GetItem', 'PutItem', 'UpdateItem'],
    index: ['Query'],
    objects: ['GetObject', 'PutObject'],
    jobRequests: ['GetObject', 'DeleteObject'],
    // The one function that can open a job's request (its url secrets).
    jobRequestKey: ['Decrypt'],
    jobResults: ['GetObject', 'PutObject', 'DeleteObject'],
    templateBodies: ['GetObject'],
    linkSecret: true,
    invokes: ['render'],
    signingKeys: ['Sign'],
  },
  // Claims, reschedules and closes due deliveries; reads the keys' secrets through the index, and
  // the finished jobs the deliveries report (with their results where the item could not hold them).
  // A round stops taking deliveries in time to finish the tries under way (WEBHOOK_TIMEOUT_MS each).
  webhooks: { table: ['GetItem', 'UpdateItem'], index: ['Query'], jobResults: ['GetObject'], schedule: 'rate(1 minute)', timeoutSeconds: 55 },
  files: { table: ['GetItem'], objects: ['GetObject'], linkSecret: true },
  // Listing reads the key's PDFs through the index; deleting marks the record and removes the file.
  pdfs: { table: ['GetItem', 'UpdateItem'], index: ['Query'], objects: ['DeleteObject'], linkSecret: true },
  usage: { table: ['GetItem', 'UpdateItem'] },
  // The template store: a template's slot of its key's count, head and versions (Put, Update, Delete
  // when pruned or deleted; Query to find the versions to prune or delete), the listing through the
  // index, large bodies in the bucket (listed under their prefix when a template is deleted), and
  // list cursors signed with the link secret (lib/api/list-cursors.ts).
  templates: {
    table: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query'],
    index: ['Query'],
    templateBodies: ['GetObject', 'PutObject', 'DeleteObject'],
    listsTemplateBodies: true,
    linkSecret: true,
  },
  // Renders a template with data and answers the PDF; stores nothing. Takes the key's share of
  // renderers as generate does (a lease: GetItem, PutItem, UpdateItem).
  // Signing keys: records (listed through the index, counted per key) and their KMS keys, never Sign
  // but for the CSR and a self-signed certificate, made when the key is.
  signingKeys: {
    table: ['GetItem', 'PutItem', 'UpdateItem'],
    index: ['Query'],
    signingKeys: ['CreateKey', 'TagResource', 'GetPublicKey', 'Sign', 'ScheduleKeyDeletion'],
  },
  preview: { chromium: true, table: ['GetItem', 'PutItem', 'UpdateItem'], templateBodies: ['GetObject'] },
  // The OpenAPI document, the reference docs and the playground: built from the code, touches no store.
  site: { siteAssets: true },
  // Reads the months' counters and a reservation's records through the index; repairs with one update.
  // Ends the jobs no run could finish (lib/jobs/job-endings.ts) as the job function would, through
  // the same code: their results (an error or the one PDF stored) fit the job's item, but that code
  // keeps a larger one in the bucket, and reads it back for the webhook.
  reconcile: {
    table: ['GetItem', 'PutItem', 'UpdateItem'],
    index: ['Query'],
    jobRequests: ['DeleteObject'],
    jobResults: ['GetObject', 'PutObject', 'DeleteObject'],
    linkSecret: true,
    schedule: 'rate(5 minutes)',
    endsGivenUpJobs: true,
    // And bulk jobs: the chunks every delivery failed (from the bulk queue's dead-letter queue; a
    // completion every delivery failed is done here, manifest only), the jobs past their time (their
    // completion asked for on the queue), and the jobs whose submission died before all their
    // chunks were queued (queued again).
    endsGivenUpChunks: true,
    sendsBulkChunks: true,
    bulkObjects: ['GetObject', 'PutObject', 'AbortMultipartUpload'],
    removesUploads: true,
    // An abandoned job's webhook gets its first try at once, as the job function would give it.
    timeoutSeconds: 60,
    // Deleted signing keys whose KMS key's deletion failed: scheduled again (lib/signatures/signing-keys.ts).
    signingKeys: ['ScheduleKeyDeletion'],
  },
};

export interface RouteMatch {
  readonly route: Route;
  readonly pathParameters: Record<string, string>;
}

function pathPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (/^\{\w+\}$/.test(segment) ? '([^/]+)' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

function safeDecode(segment: string | undefined): string | undefined {
  try {
    return decodeURIComponent(segment ?? '');
  } catch {
    return undefined;
  }
}

const paramCount = (path: string) => (path.match(/\{/g) ?? []).length;

/**
 * The route for a request, or which methods its path allows when the method is wrong. Like API
 * Gateway, a literal path segment wins over a `{parameter}`: /v1/pdf/generate is not a PDF id.
 */
export function matchRoute(method: string, path: string): RouteMatch | { allowedMethods: HttpMethod[] } {
  const resources = [...new Set(ROUTES.map((route) => route.path))].sort((a, b) => paramCount(a) - paramCount(b));
  for (const resource of resources) {
    const match = pathPattern(resource).exec(path);
    if (!match) continue;
    const candidates = ROUTES.filter((route) => route.path === resource);
    const route = candidates.find((candidate) => candidate.method === method);
    if (!route) return { allowedMethods: candidates.map((candidate) => candidate.method) };
    const names = [...resource.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
    const values = match.slice(1).map(safeDecode);
    if (values.some((value) => value === undefined)) continue;
    const pathParameters = Object.fromEntries(names.map((name, i) => [name, values[i] as string]));
    return { route, pathParameters };
  }
  return { allowedMethods: [] };
}
