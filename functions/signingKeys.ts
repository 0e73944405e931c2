import { ApiError, invalidRequest } from '#lib/api/errors.ts';
import { decodeListCursor, encodeListCursor } from '#lib/api/list-cursors.ts';
import { json, publicBaseUrl } from '#lib/api/http.ts';
import { byApiKey } from '#lib/api/authentication.ts';
import { apiHandler, readJsonObjectBody } from '#lib/api/middlewares.ts';
import { signingKeyView } from '#lib/api/views.ts';
import { SIGNING_KEY_LIMITS } from '#lib/accounts/tiers.ts';
import { signingKeyStore } from '#lib/aws/stores.ts';
import { describeIssue } from '#lib/render/options.ts';
import { settings } from '#lib/settings.ts';
import { ChainProblem } from '#lib/signatures/certificates.ts';
import { certificateBodySchema, createSigningKeyBodySchema } from '#lib/signatures/options.ts';
import { createSigningKey, deleteSigningKey, getSigningKey, listSigningKeys, uploadCertificate } from '#lib/signatures/signing-keys.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '#lib/storage/pdfs.ts';

function pageSize(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const size = Number(raw);
  if (!/^\d{1,3}$/.test(raw) || size < 1 || size > MAX_PAGE_SIZE) throw invalidRequest(`limit must be a whole number from 1 to ${MAX_PAGE_SIZE}`);
  return size;
}

const missing = (id: string) => new ApiError('signing_key_not_found', `No signing key ${JSON.stringify(id.slice(0, 80))} exists for this API key.`);

/**
 * Signing keys (shared/spec/beyond.md "Signatures"), scoped to the calling key: another key's is
 * indistinguishable from a missing one (404 `signing_key_not_found`), for every route.
 * - POST /v1/signing-keys: a KMS key, its CSR (and `self_signed` certificate) (201).
 * - GET /v1/signing-keys, GET /v1/signing-keys/{signing_key_id}: the key's, listed like GET /v1/pdf.
 * - PUT /v1/signing-keys/{signing_key_id}/certificate: the chain, checked; the key becomes active.
 * - DELETE /v1/signing-keys/{signing_key_id}: no new signatures; the KMS key is scheduled for deletion (204).
 */
export const handler = apiHandler({ auth: byApiKey, body: false }, async ({ event, apiKey }) => {
  const store = signingKeyStore();
  const id = event.pathParameters?.signing_key_id;
  const now = new Date();

  if (id === undefined) {
    if (event.httpMethod === 'POST') {
      const parsed = createSigningKeyBodySchema.safeParse(readJsonObjectBody(event));
      if (!parsed.success) throw invalidRequest(describeIssue(parsed.error));
      const { maxSigningKeys } = SIGNING_KEY_LIMITS[apiKey.tier];
      const created = await createSigningKey(store, {
        keyId: apiKey.keyId,
        keySpec: parsed.data.key_spec ?? 'ECC_NIST_P256',
        subject: parsed.data.subject,
        selfSigned: parsed.data.self_signed ?? false,
        now,
        maxSigningKeys,
      });
      if ('limitReached' in created) {
        throw new ApiError('signing_key_limit_exceeded', `A ${apiKey.tier} key may keep at most ${maxSigningKeys} signing keys; delete one to create another.`, {
          extra: { max_signing_keys: maxSigningKeys },
        });
      }
      return json(201, signingKeyView(created), { Location: `${publicBaseUrl(event)}/v1/signing-keys/${created.id}` });
    }
    const query = event.queryStringParameters ?? {};
    const after = decodeListCursor(query.cursor, apiKey.keyId, settings.linkSigningSecret, 'signing-keys');
    const page = await listSigningKeys(store, apiKey.keyId, { limit: pageSize(query.limit), ...(after && { after }) });
    return json(200, {
      data: page.keys.map(signingKeyView),
      next_cursor: page.next ? encodeListCursor(page.next, apiKey.keyId, settings.linkSigningSecret, 'signing-keys') : null,
    });
  }

  const key = await getSigningKey(store, apiKey.keyId, id);
  if (!key) throw missing(id);
  if (event.httpMethod === 'PUT') {
    const parsed = certificateBodySchema.safeParse(readJsonObjectBody(event));
    if (!parsed.success) throw invalidRequest(describeIssue(parsed.error));
    try {
      const updated = await uploadCertificate(store, key, parsed.data.certificate_chain_pem, now);
      if (!updated) throw missing(id);
      return json(200, signingKeyView(updated));
    } catch (error) {
      if (error instanceof ChainProblem) throw invalidRequest(error.message);
      throw error;
    }
  }
  if (event.httpMethod === 'DELETE') {
    await deleteSigningKey(store, key, now);
    return { statusCode: 204, headers: { 'Cache-Control': 'no-store' }, body: '' };
  }
  return json(200, signingKeyView(key));
});
