import { json } from '#lib/api/http.ts';
import { byApiKey } from '#lib/api/authentication.ts';
import { apiHandler } from '#lib/api/middlewares.ts';
import { pdfStore } from '#lib/aws/stores.ts';
import { createUpload } from '#lib/bulk/uploads.ts';

/**
 * POST /v1/uploads: where to PUT a bulk job's JSON Lines input (a presigned S3 URL, for an hour),
 * then `POST /v1/pdf/bulk { upload_id }`. The upload is the key's own: only its key can submit it
 * (lib/bulk/uploads.ts).
 */
export const handler = apiHandler({ auth: byApiKey, body: false }, async ({ apiKey }) => json(201, await createUpload(pdfStore(), apiKey)));
