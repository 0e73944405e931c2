/** The API as a customer's HTTP client uses it: generate, batch, and download through the link. */
import type { CorpusDocument } from './corpus.ts';
import { checkPdf } from './pdf.ts';

/** The PDF record of a generate response (spec 2.1), as far as the benchmark reads it. */
export interface GeneratedPdf {
  readonly id: string;
  readonly url: string;
  readonly pages: number;
  readonly size: number;
  readonly generation_time_ms: number;
}

export interface BatchItemResult {
  readonly success: boolean;
  readonly download_url?: string;
  readonly pages?: number;
  readonly error?: { code: string; message: string };
}

export interface BatchResponse {
  readonly total: number;
  readonly successful: number;
  readonly failed: number;
  readonly processing_time_ms?: number;
  readonly results: BatchItemResult[];
}

async function post<T>(url: string, apiKey: string, body: unknown): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`POST ${new URL(url).pathname} answered ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

export function generate(apiUrl: string, apiKey: string, document: CorpusDocument): Promise<GeneratedPdf> {
  return post<GeneratedPdf>(`${apiUrl}/v1/pdf/generate`, apiKey, { html: document.html, ...document.options });
}

export async function batch(apiUrl: string, apiKey: string, document: CorpusDocument, size: number): Promise<BatchResponse> {
  const pdfs = Array.from({ length: size }, (_, i) => ({
    html: document.html,
    options: document.options,
    metadata: { reference_id: `bench-${i}` },
  }));
  const response = await post<BatchResponse>(`${apiUrl}/v1/pdf/batch`, apiKey, { pdfs });
  if (response.successful !== size || response.results.length !== size) {
    const failure = response.results.find((result) => !result.success);
    throw new Error(`batch: ${response.successful} of ${size} succeeded; first failure: ${JSON.stringify(failure?.error)}`);
  }
  return response;
}

/** Follows a download link (302 to a presigned S3 URL) and returns the PDF's bytes. */
export async function download(url: string): Promise<Uint8Array> {
  const response = await fetch(url, { redirect: 'follow' });
  if (response.status !== 200) throw new Error(`download of ${url} answered ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * Downloads every PDF and checks it with pdf-lib (page count > 0, and the count the API reported),
 * a few at a time. Called outside the timed parts.
 */
export async function verifyDownloads(
  links: readonly { url: string; reportedPages: number }[],
  document: CorpusDocument,
  mismatches: string[],
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < links.length) {
      const link = links[next++] as { url: string; reportedPages: number };
      const pages = await checkPdf(await download(link.url), document.expectedPages, `service ${document.name}`, mismatches);
      if (pages !== link.reportedPages) throw new Error(`service ${document.name}: the API reported ${link.reportedPages} pages, the PDF has ${pages}`);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}
