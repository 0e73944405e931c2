// Renders the API reference from the OpenAPI document the API serves (an external file, not an
// inline script: the page's Content-Security-Policy allows scripts from this origin only).
const container = document.getElementById('redoc');
const specUrl = new URL(container.dataset.specUrl, document.baseURI).href;
// Redoc's own options: no "powered by" link out, and nothing that would fetch from elsewhere.
window.Redoc.init(
  specUrl,
  { hideDownloadButton: false, expandResponses: '200', hideHostname: false, disableSearch: false, theme: { typography: { fontFamily: 'system-ui, sans-serif', headings: { fontFamily: 'system-ui, sans-serif' }, code: { fontFamily: 'ui-monospace, monospace' } } } },
  container,
);
