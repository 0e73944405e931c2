/** html-encoding-sniffer 7 ships no types: its one function, as its README documents it. */
declare module 'html-encoding-sniffer' {
  interface SniffOptions {
    /** XML sniffing instead of HTML (ignores `<meta>`). */
    readonly xml?: boolean;
    /** A label from the transport layer (a Content-Type header), which overrides everything but a BOM. */
    readonly transportLayerEncodingLabel?: string;
    /** The answer when nothing is found: `windows-1252` for HTML unless given. */
    readonly defaultEncoding?: string;
    /** How far to look for `<meta>` declarations: 1024 bytes unless given. */
    readonly maxPrescanBytes?: number;
  }
  /** The canonical WHATWG encoding name the bytes stand in. */
  function htmlEncodingSniffer(bytes: Uint8Array, options?: SniffOptions): string;
  export = htmlEncodingSniffer;
}
