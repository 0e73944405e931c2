/**
 * Three tiny cases to develop the harness against while the real corpus (corpus/index.ts) is
 * written: a static invoice with a footer, a Chart.js chart (scripted, animated), and Tamil text.
 */
import { readFileSync } from 'node:fs';
import type { FidelityCase } from './corpus/types.ts';

export function smokeCases(): FidelityCase[] {
  const chartJs = readFileSync(new URL('../../node_modules/chart.js/dist/chart.umd.min.js', import.meta.url), 'utf8');
  const rows = Array.from({ length: 30 }, (_, i) => `<tr><td>Item ${i + 1}</td><td>${(i * 7) % 13 + 1}</td><td>${(i * 3.5 + 10).toFixed(2)} EUR</td></tr>`).join('');
  return [
    {
      name: 'smoke-invoice',
      title: 'Static invoice with a table and a page-numbered footer',
      html: `<!doctype html><html lang="en"><head><style>body{font-family:sans-serif}table{width:100%;border-collapse:collapse}td{border-bottom:1px solid #ccc;padding:4px}</style></head>
<body><h1>Invoice 42</h1><p>Acme GmbH, Hauptstraße 1, 10115 Berlin</p><table>${rows}</table><p><strong>Total: 1,234.50 EUR</strong></p></body></html>`,
      options: { format: 'A4', margin: '15mm', footer_html: '<div>Page {{pageNumber}} of {{totalPages}}</div>' },
    },
    {
      name: 'smoke-chartjs',
      title: 'Chart.js bar chart (animated, responsive)',
      html: `<!doctype html><html lang="en"><head><script>${chartJs.replace(/<\/script/gi, '<\\/script')}</script></head>
<body><h1>Quarterly revenue</h1><div style="width:600px"><canvas id="c"></canvas></div>
<script>new Chart(document.getElementById('c'), { type: 'bar', data: { labels: ['Q1','Q2','Q3','Q4'], datasets: [{ label: 'Revenue', data: [12, 19, 7, 15], backgroundColor: '#3b82f6' }] } });</script>
</body></html>`,
    },
    {
      name: 'smoke-tamil',
      title: 'A Tamil paragraph',
      script: 'Tamil',
      html: `<!doctype html><html lang="ta"><body><h1>தமிழ்</h1><p>யாமறிந்த மொழிகளிலே தமிழ்மொழி போல் இனிதாவது எங்கும் காணோம். பாமரராய் விலங்குகளாய் உலகனைத்தும் இகழ்ச்சிசொலப் பான்மை கெட்டு.</p></body></html>`,
    },
  ];
}
