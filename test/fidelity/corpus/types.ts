/**
 * One document of the fidelity corpus: real-world HTML built from real libraries installed from npm,
 * inlined so that it is self-contained (the egress guard rightly refuses loopback, so a document may
 * fetch nothing but data: URLs).
 */
export interface FidelityCase {
  /** Unique kebab-case id, used in the table and the report's file names. */
  readonly name: string;
  /** One line: what the document is and which library draws it. */
  readonly title: string;
  /** The whole document. */
  readonly html: string;
  /** API options sent with it to POST /v1/pdf/generate (format, margin, header_html...); none by default. */
  readonly options?: Readonly<Record<string, unknown>>;
  /**
   * How long the reference waits after the load event before printing: what Chrome's print preview
   * shows once the page is done drawing (charts animated in, Paged.js finished). Default 3000 ms.
   */
  readonly settleMs?: number;
  /** For the script cases: the writing system the document's text is in (e.g. "Tamil"). */
  readonly script?: string;
  /**
   * The case is a stored template (shared/spec/beyond.md "Templates"): `html` is its Liquid source
   * and `data` what it is rendered with. The service stores it and prints it by `template_id`; the
   * reference prints the template engine's output for the same data, as if sent directly. So the
   * comparison shows what templates cost in fidelity: nothing, when it passes.
   */
  readonly template?: { readonly data: Readonly<Record<string, unknown>> };
}
