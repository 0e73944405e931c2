/**
 * The `Idempotency-Key` header's contract (shared/spec/beyond.md), apart from its machinery
 * (lib/api/idempotency.ts) so the OpenAPI document states the very rule the server checks without
 * loading what stores the records.
 */
import { z } from 'zod';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Set on a response that repeats an earlier one. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

export const idempotencyKeySchema = z
  .string()
  .regex(/^[\x20-\x7e]{1,255}$/, { error: `${IDEMPOTENCY_HEADER} must be 1 to 255 printable ASCII characters.` })
  .meta({
    description:
      'Makes the request safe to retry: the same key with the same request within 24 hours answers the first response (marked `Idempotent-Replayed: true`) and charges nothing; with another request it is 422 `idempotency_key_reused`; while the first still runs, 409 `request_in_progress`. A request that failed keeps nothing: the same key runs again; one that died (a crash) is finished by the retry, which adopts what it stored and charges it once. A replay answers a job’s current status, and 410 `pdf_gone` (batch item `PDF_GONE`) for a PDF deleted since. Scoped to your API key. 1 to 255 printable ASCII characters; sent twice, 400.',
    example: 'order-1042-invoice',
  });
