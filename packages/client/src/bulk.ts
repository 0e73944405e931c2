/**
 * Bulk jobs from the client (shared/spec/beyond.md, "Bulk jobs"): `bulk()` sends the items inline
 * when they are few, else uploads them as a JSON Lines file (`POST /v1/uploads`, then a PUT straight
 * to storage) and submits `POST /v1/pdf/bulk`; a finished job's manifest is read line by line as it
 * downloads. The calls themselves are the typed client's (index.ts hands them in as a BulkPort).
 */
import type { components } from './schema.d.ts';

type Schemas = components['schemas'];
export type Upload = Schemas['Upload'];
export type BulkAccepted = Schemas['BulkAccepted'];
export type BulkResult = Schemas['BulkResultOutput'];
/** The body `POST /v1/pdf/bulk` takes. */
export type BulkBody = Schemas['BulkRequest'];

/** One line of a bulk job's manifest: the input line's number and what became of it. */
export type ManifestLine = { line: number } & (
  | {
      success: true;
      pdf_id: string;
      download_url: string;
      pages: number;
      size_bytes: number;
      metadata: Record<string, unknown>;
      /** What the line made: `application/pdf`, or a picture's `image/png`, `image/jpeg`, `image/webp` (absent from manifests written before pictures). */
      content_type?: string;
    }
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
  readonly options?: Schemas['DocumentOptions'];
  /** Also one ZIP of every PDF (`result.archive_url`). */
  readonly archive?: boolean;
  /** Run the valid lines and report the invalid ones as the job's first failures (else the job is refused, 400, naming them). */
  readonly skip_invalid?: boolean;
  readonly webhook_url?: string;
}

export interface BulkOptions {
  /** Told once the file has been uploaded, before the job is submitted. */
  readonly onUploaded?: (upload: Upload) => void;
}

/** Items sent inline at most (the API's limit, above which it asks for an upload). */
export const MAX_INLINE_ITEMS = 1_000;
/** An inline request stays under the API's 5 MB body limit with room to spare; larger goes as an upload. */
const INLINE_BODY_BUDGET = 4 * 1024 * 1024;

/** The typed client's calls the bulk helpers make. */
export interface BulkPort {
  createUpload(): Promise<Upload>;
  /** PUTs the file to the upload's presigned URL (no key: the URL is the credential). */
  putFile(url: string, body: Blob): Promise<void>;
  submit(body: BulkBody): Promise<BulkAccepted>;
  /** A finished job's manifest or archive: the response, its body unread. */
  jobFile(jobId: string, file: 'manifest' | 'archive'): Promise<Response>;
}

/** The file's bytes as a Blob, read from disk as it is sent when given a path (Node only). */
async function fileBlob(file: string | Blob | Uint8Array): Promise<Blob> {
  if (file instanceof Blob) return file;
  if (file instanceof Uint8Array) return new Blob([file as Uint8Array<ArrayBuffer>]);
  const { openAsBlob } = await import('node:fs');
  return openAsBlob(file);
}

/** Uploads a JSON Lines file for a bulk job: an upload id to submit. */
export async function upload(api: BulkPort, file: string | Blob | Uint8Array): Promise<Upload> {
  const blob = await fileBlob(file);
  const created = await api.createUpload();
  await api.putFile(created.url, blob);
  return created;
}

/** The items as a JSON Lines file: one item per line. */
export function jsonLines(items: readonly unknown[]): Blob {
  return new Blob(items.map((item) => `${JSON.stringify(item)}\n`));
}

/** Submits a bulk job: inline when the items are few and small, else through an upload. */
export async function bulk(api: BulkPort, request: BulkRequest, { onUploaded }: BulkOptions = {}): Promise<BulkAccepted> {
  const { items, file, upload_id: given, ...rest } = request;
  if ([items, file, given].filter((source) => source !== undefined).length !== 1) throw new TypeError('bulk(): give exactly one of items, file or upload_id');
  const shared = { ...rest, archive: rest.archive ?? false, skip_invalid: rest.skip_invalid ?? false };
  if (items !== undefined && items.length <= MAX_INLINE_ITEMS && new Blob([JSON.stringify(items)]).size <= INLINE_BODY_BUDGET) {
    return api.submit({ ...shared, items } as BulkBody);
  }
  let uploadId = given;
  if (uploadId === undefined) {
    const uploaded = await upload(api, items !== undefined ? jsonLines(items) : file!);
    onUploaded?.(uploaded);
    uploadId = uploaded.upload_id;
  }
  return api.submit({ ...shared, upload_id: uploadId } as BulkBody);
}

/** The lines of a text stream, as they arrive. */
async function* textLines(body: ReadableStream<Uint8Array> | null): AsyncGenerator<string> {
  if (!body) return;
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    const lines = pending.split('\n');
    pending = lines.pop()!;
    yield* lines;
  }
  yield pending + decoder.decode();
}

/** A finished bulk job's manifest, line by line, as it downloads. */
export async function* manifestLines(api: BulkPort, jobId: string): AsyncGenerator<ManifestLine> {
  const response = await api.jobFile(jobId, 'manifest');
  for await (const line of textLines(response.body)) if (line.trim() !== '') yield JSON.parse(line) as ManifestLine;
}
