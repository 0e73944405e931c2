/**
 * Bulk jobs from the client (shared/spec/beyond.md, "Bulk jobs"): `bulk()` sends the items inline
 * when they are few, else uploads them as a JSON Lines file (`POST /v1/uploads`, then a PUT straight
 * to storage) and submits `POST /v1/pdf/bulk`; the job's manifest and archive are read through
 * `GET /v1/jobs/{job_id}/manifest|archive`, which redirect to storage.
 *
 * These calls go through `send` (the same base URL, key and fetch as the typed client) rather than
 * the typed `raw` client only while the OpenAPI document does not describe the bulk routes; their
 * types come from the generated schema once it does (see `Generated`).
 */
import type { components } from './schema.d.ts';

type Schemas = components['schemas'];
/** The generated schema `Name` once the OpenAPI document has it, `Fallback` until then. */
type Generated<Name extends string, Fallback> = Name extends keyof Schemas ? Schemas[Name] : Fallback;

/** `POST /v1/uploads`: where to PUT a JSON Lines file, until when. */
export type Upload = Generated<'Upload', { upload_id: string; url: string; expires_at: string }>;
/** `POST /v1/pdf/bulk`'s 202: the job, and how many lines it has. */
export type BulkAccepted = Generated<'BulkAccepted', { job_id: string; status: string; status_url: string; total: number }>;
/** A finished bulk job's `result`. */
export type BulkResult = Generated<'BulkResult', { manifest_url: string; archive_url?: string; succeeded: number; failed: number }>;

/** One line of a bulk job's manifest: the input line's number and what became of it. */
export type ManifestLine = { line: number } & (
  | { success: true; pdf_id: string; download_url: string; pages: number; size_bytes: number; metadata: Record<string, unknown> }
  | { success: false; error: { code: string; message: string } }
);

/**
 * A bulk job: its items (each a batch item), or a JSON Lines file of them (a path, a Blob, or its
 * bytes), or an upload already made; `options` apply to every item under the item's own.
 */
export interface BulkRequest {
  readonly items?: readonly unknown[];
  readonly file?: string | Blob | Uint8Array;
  readonly upload_id?: string;
  readonly options?: Record<string, unknown>;
  /** Also one ZIP of every PDF (`result.archive_url`). */
  readonly archive?: boolean;
  /** Run the valid lines and report the invalid ones as the job's first failures (else the job is refused, 400, naming them). */
  readonly skip_invalid?: boolean;
  readonly webhook_url?: string;
}

export interface BulkOptions {
  /** Told once the file has been uploaded (before the job is submitted): its upload id. */
  readonly onUploaded?: (upload: Upload) => void;
}

/** Items sent inline at most (the API's limit, above which it asks for an upload). */
export const MAX_INLINE_ITEMS = 1_000;
/** An inline request stays under the API's 5 MB body limit with room to spare; larger goes as an upload. */
const INLINE_BODY_BUDGET = 4 * 1024 * 1024;

/** How the bulk helpers reach the API: the client's base URL, key and fetch, and how it reports an answer that is not success. */
export interface Sender {
  send<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** A GET of the API that may redirect to storage: the response, its body unread. */
  open(path: string): Promise<Response>;
  readonly fetch: typeof globalThis.fetch;
  readonly fail: (response: Response, body: unknown) => Error;
}

/** The file's bytes as a Blob, read from disk as it is sent when given a path (Node only). */
async function fileBlob(file: string | Blob | Uint8Array): Promise<Blob> {
  if (file instanceof Blob) return file;
  if (file instanceof Uint8Array) return new Blob([file as Uint8Array<ArrayBuffer>]);
  const { openAsBlob } = await import('node:fs');
  return openAsBlob(file);
}

/** Uploads a JSON Lines file for a bulk job: an upload id to submit. */
export async function upload(api: Sender, file: string | Blob | Uint8Array): Promise<Upload> {
  const blob = await fileBlob(file);
  const created = await api.send<Upload>('POST', '/v1/uploads');
  // Straight to storage: no key (the URL is the credential), the size known up front.
  const put = await api.fetch(created.url, { method: 'PUT', body: blob });
  if (!put.ok) throw api.fail(put, await put.text().catch(() => ''));
  return created;
}

/** The items as a JSON Lines file: one item per line. */
export function jsonLines(items: readonly unknown[]): Blob {
  return new Blob(items.map((item) => `${JSON.stringify(item)}\n`));
}

/** Submits a bulk job: inline when the items are few and small, else through an upload. */
export async function bulk(api: Sender, request: BulkRequest, { onUploaded }: BulkOptions = {}): Promise<BulkAccepted> {
  const { items, file, upload_id: given, ...rest } = request;
  if ([items, file, given].filter((source) => source !== undefined).length !== 1) throw new TypeError('bulk(): give exactly one of items, file or upload_id');
  let body: Record<string, unknown>;
  if (items !== undefined && items.length <= MAX_INLINE_ITEMS && new Blob([JSON.stringify(items)]).size <= INLINE_BODY_BUDGET) {
    body = { ...rest, items };
  } else {
    const uploaded = given !== undefined ? undefined : await upload(api, items !== undefined ? jsonLines(items) : file!);
    if (uploaded) onUploaded?.(uploaded);
    body = { ...rest, upload_id: given ?? uploaded!.upload_id };
  }
  return api.send<BulkAccepted>('POST', '/v1/pdf/bulk', body);
}

/** A finished bulk job's manifest, line by line, as it downloads. */
export async function* manifestLines(api: Sender, jobId: string): AsyncGenerator<ManifestLine> {
  const response = await api.open(`/v1/jobs/${encodeURIComponent(jobId)}/manifest`);
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) if (line.trim() !== '') yield JSON.parse(line) as ManifestLine;
  }
  pending += decoder.decode();
  if (pending.trim() !== '') yield JSON.parse(pending) as ManifestLine;
}
