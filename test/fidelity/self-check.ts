/**
 * The document the harness checks itself with (fidelity.test.ts, "the harness itself"): a static
 * two-page invoice with a page-numbered footer, printed twice by the reference to show that the
 * comparison adds no noise, and once with a slightly larger margin to show that it catches a shift.
 */
import type { FidelityCase } from './corpus/types.ts';

const rows = Array.from({ length: 30 }, (_, i) => `<tr><td>Item ${i + 1}</td><td>${((i * 7) % 13) + 1}</td><td>${(i * 3.5 + 10).toFixed(2)} EUR</td></tr>`).join('');

export const SELF_CHECK_CASE: FidelityCase = {
  name: 'self-check-invoice',
  title: 'Static invoice with a table and a page-numbered footer',
  html: `<!doctype html><html lang="en"><head><style>body{font-family:sans-serif}table{width:100%;border-collapse:collapse}td{border-bottom:1px solid #ccc;padding:4px}</style></head>
<body><h1>Invoice 42</h1><p>Acme GmbH, Hauptstraße 1, 10115 Berlin</p><table>${rows}</table><p><strong>Total: 1,234.50 EUR</strong></p></body></html>`,
  options: { format: 'A4', margin: '15mm', footer_html: '<div>Page {{pageNumber}} of {{totalPages}}</div>' },
};
