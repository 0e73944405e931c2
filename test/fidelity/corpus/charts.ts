/**
 * Chart documents: a sales dashboard drawn by Chart.js, operations and energy reports drawn by
 * ECharts (canvas and SVG renderers), a web analytics report by ApexCharts and a rainfall chart by
 * d3 with a transition. Each library's browser build is inlined and runs with its default
 * animations, as a real dashboard does; the data is fixed.
 */
import { esc, htmlDocument, inlineScript, inlineStyle, packageScript } from './assets.ts';
import type { FidelityCase } from './types.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const REPORT_CSS = `
  @page { size: A4; margin: 14mm 12mm; }
  * { box-sizing: border-box; }
  body { font-family: sans-serif; color: #1f2933; margin: 0; font-size: 10.5pt; }
  header.report { display: flex; justify-content: space-between; align-items: flex-end; border-bottom: 3px solid #2563eb; padding-bottom: 8px; margin-bottom: 14px; }
  header.report h1 { font-size: 19pt; margin: 0; }
  header.report .meta { text-align: right; color: #52606d; font-size: 9pt; line-height: 1.4; }
  .kpis { display: grid; grid-template-columns: repeat(4, 1fr); gap: 10px; margin-bottom: 14px; }
  .kpi { border: 1px solid #d9e2ec; border-radius: 6px; padding: 8px 10px; background: #f5f7fa; }
  .kpi .label { font-size: 8pt; text-transform: uppercase; letter-spacing: .04em; color: #616e7c; }
  .kpi .value { font-size: 16pt; font-weight: bold; margin-top: 2px; }
  .kpi .delta { font-size: 8.5pt; }
  .up { color: #15803d; } .down { color: #b91c1c; }
  .grid { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
  .panel { border: 1px solid #d9e2ec; border-radius: 6px; padding: 10px; break-inside: avoid; }
  .panel h2 { font-size: 11pt; margin: 0 0 6px; }
  .panel.wide { grid-column: span 2; }
  .chart { position: relative; height: 230px; }
  .panel.wide .chart { height: 250px; }
  p.note { font-size: 9pt; color: #52606d; margin: 12px 0 0; line-height: 1.45; }
  table.data { border-collapse: collapse; width: 100%; font-size: 9pt; margin-top: 12px; }
  table.data th, table.data td { border-bottom: 1px solid #e4e7eb; padding: 4px 6px; text-align: right; }
  table.data th:first-child, table.data td:first-child { text-align: left; }
  table.data thead th { background: #eef2f7; }
`;

function kpis(items: readonly (readonly [string, string, string, boolean])[]): string {
  return `<section class="kpis">${items
    .map(
      ([label, value, delta, up]) =>
        `<div class="kpi"><div class="label">${esc(label)}</div><div class="value">${esc(value)}</div><div class="delta ${up ? 'up' : 'down'}">${up ? '▲' : '▼'} ${esc(delta)}</div></div>`,
    )
    .join('')}</section>`;
}

function chartJsDashboard(): FidelityCase {
  const revenue2023 = [412, 398, 455, 471, 502, 538, 561, 549, 517, 530, 588, 642];
  const revenue2024 = [446, 431, 497, 520, 548, 590, 617, 604, 566, 0, 0, 0].slice(0, 9);
  const script = `
    const months = ${JSON.stringify(MONTHS)};
    Chart.defaults.font.family = 'sans-serif';
    Chart.defaults.font.size = 11;
    Chart.defaults.color = '#3e4c59';
    new Chart(document.getElementById('revenue'), {
      type: 'line',
      data: { labels: months, datasets: [
        { label: 'FY2023', data: ${JSON.stringify(revenue2023)}, borderColor: '#9aa5b1', backgroundColor: 'rgba(154,165,177,0.15)', borderDash: [5, 4], tension: 0.3, pointRadius: 2 },
        { label: 'FY2024', data: ${JSON.stringify(revenue2024)}, borderColor: '#2563eb', backgroundColor: 'rgba(37,99,235,0.12)', fill: true, tension: 0.3, pointRadius: 3 }
      ] },
      options: { responsive: true, maintainAspectRatio: false, plugins: { legend: { position: 'bottom' } },
        scales: { y: { title: { display: true, text: 'Revenue (k$)' }, beginAtZero: false, suggestedMin: 350 } } }
    });
    new Chart(document.getElementById('regions'), {
      type: 'bar',
      data: { labels: ['Pacific NW', 'California', 'Mountain', 'Midwest', 'Northeast', 'Southeast'],
        datasets: [
          { label: 'Q2', data: [312, 488, 201, 276, 354, 230], backgroundColor: '#93c5fd' },
          { label: 'Q3', data: [341, 512, 226, 269, 391, 248], backgroundColor: '#2563eb' }
        ] },
      options: { responsive: true, maintainAspectRatio: false, plugins: { legend: { position: 'bottom' } },
        scales: { y: { beginAtZero: true, title: { display: true, text: 'k$' } } } }
    });
    new Chart(document.getElementById('mix'), {
      type: 'doughnut',
      data: { labels: ['Tents & shelters', 'Footwear', 'Outerwear', 'Packs', 'Climbing', 'Accessories'],
        datasets: [{ data: [24, 21, 19, 14, 12, 10], backgroundColor: ['#1d4ed8', '#0891b2', '#16a34a', '#ca8a04', '#ea580c', '#9333ea'] }] },
      options: { responsive: true, maintainAspectRatio: false, plugins: { legend: { position: 'right' } }, cutout: '58%' }
    });
    new Chart(document.getElementById('reps'), {
      type: 'bar',
      data: { labels: ['M. Okafor', 'L. Brandt', 'S. Iyer', 'J. Kowalczyk', 'A. Moreau', 'T. Nakamura'],
        datasets: [
          { label: 'New accounts', data: [118, 96, 104, 77, 82, 69], backgroundColor: '#16a34a' },
          { label: 'Renewals', data: [64, 88, 51, 79, 58, 71], backgroundColor: '#86efac' }
        ] },
      options: { indexAxis: 'y', responsive: true, maintainAspectRatio: false, plugins: { legend: { position: 'bottom' } },
        scales: { x: { stacked: true, title: { display: true, text: 'k$' } }, y: { stacked: true } } }
    });
    new Chart(document.getElementById('satisfaction'), {
      type: 'radar',
      data: { labels: ['Delivery', 'Product quality', 'Returns', 'Support', 'Website', 'Price'],
        datasets: [
          { label: 'Q2', data: [7.9, 8.6, 7.1, 8.0, 7.4, 6.9], borderColor: '#9aa5b1', backgroundColor: 'rgba(154,165,177,0.2)' },
          { label: 'Q3', data: [8.4, 8.7, 7.8, 8.3, 7.9, 7.0], borderColor: '#ea580c', backgroundColor: 'rgba(234,88,12,0.2)' }
        ] },
      options: { responsive: true, maintainAspectRatio: false, plugins: { legend: { position: 'bottom' } },
        scales: { r: { suggestedMin: 5, suggestedMax: 10 } } }
    });
  `;
  const body = `
    <header class="report"><div><h1>Q3 FY2024 Sales Dashboard</h1><div>Northwind Outfitters — Direct &amp; Wholesale</div></div>
      <div class="meta">Period: 1 July – 30 September 2024<br>Prepared by Revenue Operations<br>Published 7 October 2024</div></header>
    ${kpis([
      ['Revenue (Q3)', '$1.79M', '7.1% vs Q3 2023', true],
      ['Gross margin', '46.2%', '0.8 pt vs Q2', true],
      ['Orders', '18,406', '5.4% vs Q3 2023', true],
      ['Return rate', '6.3%', '0.4 pt vs Q2', false],
    ])}
    <section class="grid">
      <div class="panel wide"><h2>Monthly revenue, FY2023 vs FY2024</h2><div class="chart"><canvas id="revenue"></canvas></div></div>
      <div class="panel"><h2>Revenue by region</h2><div class="chart"><canvas id="regions"></canvas></div></div>
      <div class="panel"><h2>Product mix (share of Q3 revenue, %)</h2><div class="chart"><canvas id="mix"></canvas></div></div>
      <div class="panel"><h2>Top account managers</h2><div class="chart"><canvas id="reps"></canvas></div></div>
      <div class="panel"><h2>Customer satisfaction (0–10)</h2><div class="chart"><canvas id="satisfaction"></canvas></div></div>
    </section>
    <p class="note">Revenue is recognised at shipment and excludes sales tax. Wholesale orders placed through the dealer
      portal are attributed to the dealer's home region. Satisfaction scores come from the post-delivery survey
      (n = 2,914 in Q3, response rate 15.8%).</p>`;
  return {
    name: 'chartjs-dashboard',
    title: 'Quarterly sales dashboard: five Chart.js charts (line, bar, doughnut, stacked bar, radar), default animation',
    html: htmlDocument({
      title: 'Q3 FY2024 Sales Dashboard',
      head: inlineStyle(REPORT_CSS) + packageScript('chart.js', 'dist/chart.umd.min.js'),
      body: body + inlineScript(script),
    }),
  };
}

function echartsOperations(): FidelityCase {
  const script = `
    const months = ${JSON.stringify(MONTHS)};
    const opts = { renderer: 'canvas' };
    const deliveries = echarts.init(document.getElementById('deliveries'), null, opts);
    deliveries.setOption({
      textStyle: { fontFamily: 'sans-serif' },
      tooltip: { trigger: 'axis' },
      legend: { bottom: 0, data: ['Deliveries', 'On-time rate'] },
      grid: { left: 56, right: 56, top: 24, bottom: 48 },
      xAxis: { type: 'category', data: months },
      yAxis: [
        { type: 'value', name: 'Deliveries', axisLabel: { formatter: (v) => (v / 1000) + 'k' } },
        { type: 'value', name: 'On time', min: 80, max: 100, axisLabel: { formatter: '{value}%' } }
      ],
      series: [
        { name: 'Deliveries', type: 'bar', data: [38210, 36904, 41288, 42010, 44561, 45932, 47108, 46217, 43809, 45120, 49877, 55302], itemStyle: { color: '#0f766e' } },
        { name: 'On-time rate', type: 'line', yAxisIndex: 1, smooth: true, data: [94.1, 93.6, 95.0, 95.4, 94.8, 93.9, 92.7, 93.1, 95.2, 95.8, 94.0, 90.6], itemStyle: { color: '#f59e0b' }, lineStyle: { width: 3 } }
      ]
    });
    const causes = echarts.init(document.getElementById('causes'), null, opts);
    causes.setOption({
      textStyle: { fontFamily: 'sans-serif' },
      legend: { orient: 'vertical', right: 0, top: 'middle' },
      series: [{ type: 'pie', radius: ['30%', '58%'], center: ['34%', '50%'], label: { formatter: '{d}%' },
        data: [
          { name: 'Weather', value: 412 }, { name: 'Traffic', value: 655 }, { name: 'Address issues', value: 298 },
          { name: 'Vehicle fault', value: 121 }, { name: 'Depot backlog', value: 377 }, { name: 'Other', value: 88 }
        ] }]
    });
    const utilisation = echarts.init(document.getElementById('utilisation'), null, opts);
    utilisation.setOption({
      series: [{ type: 'gauge', min: 0, max: 100, splitNumber: 5, radius: '88%', center: ['50%', '55%'],
        progress: { show: true, width: 14 }, axisLine: { lineStyle: { width: 14 } },
        axisTick: { distance: -26, length: 6 }, splitLine: { distance: -30, length: 12 }, axisLabel: { distance: 24, fontSize: 10 },
        detail: { valueAnimation: true, formatter: '{value}%', fontSize: 22, offsetCenter: [0, '70%'] },
        title: { offsetCenter: [0, '95%'] }, data: [{ value: 87.4, name: 'Fleet utilisation' }] }]
    });
    const depots = echarts.init(document.getElementById('depots'), null, opts);
    depots.setOption({
      textStyle: { fontFamily: 'sans-serif' },
      grid: { left: 90, right: 24, top: 10, bottom: 28 },
      xAxis: { type: 'value', name: 'min', nameLocation: 'end' },
      yAxis: { type: 'category', data: ['Leeds', 'Bristol', 'Glasgow', 'Birmingham', 'Manchester', 'London East'] },
      series: [{ type: 'bar', data: [41, 38, 52, 47, 44, 63], itemStyle: { color: '#6366f1' }, label: { show: true, position: 'right' } }]
    });
  `;
  const body = `
    <header class="report"><div><h1>Fleet Operations Report 2023</h1><div>Harbour Line Logistics — UK parcel network</div></div>
      <div class="meta">Reporting year: January – December 2023<br>Network Planning &amp; Performance<br>Issue 2, 19 January 2024</div></header>
    ${kpis([
      ['Parcels delivered', '536,288', '4.9% vs 2022', true],
      ['On-time rate', '94.0%', '0.6 pt vs 2022', true],
      ['Failed first attempts', '1,951', '3.2% vs 2022', false],
      ['CO₂ per parcel', '182 g', '6.7% vs 2022', true],
    ])}
    <section class="grid">
      <div class="panel wide"><h2>Deliveries and on-time rate by month</h2><div class="chart" id="deliveries" style="width:100%"></div></div>
      <div class="panel"><h2>Causes of late delivery</h2><div class="chart" id="causes"></div></div>
      <div class="panel"><h2>Vehicle utilisation, December</h2><div class="chart" id="utilisation"></div></div>
      <div class="panel wide"><h2>Average dwell time at depot (minutes)</h2><div class="chart" id="depots" style="height:190px"></div></div>
    </section>
    <p class="note">On-time means delivered within the one-hour window promised to the recipient. December figures include the
      peak-season contract vehicles (62 vans, 11 rigid trucks) hired from 27 November.</p>`;
  return {
    name: 'echarts-canvas-operations',
    title: 'Fleet operations report: ECharts canvas renderer (bar + line, doughnut, gauge, horizontal bar)',
    html: htmlDocument({
      lang: 'en-GB',
      title: 'Fleet Operations Report 2023',
      head: inlineStyle(REPORT_CSS) + packageScript('echarts', 'dist/echarts.min.js'),
      body: body + inlineScript(script),
    }),
  };
}

function echartsEnergy(): FidelityCase {
  const script = `
    const opts = { renderer: 'svg' };
    const quarters = ['Q1 2022', 'Q2 2022', 'Q3 2022', 'Q4 2022', 'Q1 2023', 'Q2 2023', 'Q3 2023', 'Q4 2023', 'Q1 2024', 'Q2 2024'];
    const mix = echarts.init(document.getElementById('mix'), null, opts);
    const series = (name, color, data) => ({ name, type: 'line', stack: 'total', areaStyle: {}, smooth: true, symbol: 'none', itemStyle: { color }, data });
    mix.setOption({
      textStyle: { fontFamily: 'sans-serif' },
      legend: { bottom: 0 },
      grid: { left: 48, right: 16, top: 16, bottom: 56 },
      xAxis: { type: 'category', boundaryGap: false, data: quarters },
      yAxis: { type: 'value', name: 'TWh' },
      series: [
        series('Wind', '#0ea5e9', [21.4, 14.9, 12.8, 24.1, 23.9, 15.6, 14.2, 26.7, 25.1, 16.8]),
        series('Solar', '#facc15', [2.1, 5.2, 5.6, 1.7, 2.4, 5.9, 6.1, 1.9, 2.8, 6.7]),
        series('Hydro', '#22c55e', [1.6, 1.1, 0.9, 1.5, 1.7, 1.0, 0.9, 1.6, 1.8, 1.1]),
        series('Nuclear', '#a855f7', [11.8, 10.2, 9.9, 11.0, 10.7, 9.1, 8.8, 10.1, 9.9, 8.7]),
        series('Gas', '#f97316', [24.0, 20.9, 23.5, 26.8, 21.2, 17.3, 19.6, 20.4, 16.9, 13.8])
      ]
    });
    const flows = echarts.init(document.getElementById('flows'), null, opts);
    flows.setOption({
      textStyle: { fontFamily: 'sans-serif' },
      series: [{ type: 'sankey', left: 8, right: 90, top: 8, bottom: 8, nodeGap: 10, emphasis: { focus: 'adjacency' },
        lineStyle: { color: 'gradient', curveness: 0.5 },
        data: [{ name: 'Wind' }, { name: 'Solar' }, { name: 'Nuclear' }, { name: 'Gas' }, { name: 'Imports' },
          { name: 'Grid' }, { name: 'Homes' }, { name: 'Industry' }, { name: 'Services' }, { name: 'Transport' }, { name: 'Losses' }],
        links: [
          { source: 'Wind', target: 'Grid', value: 16.8 }, { source: 'Solar', target: 'Grid', value: 6.7 },
          { source: 'Nuclear', target: 'Grid', value: 8.7 }, { source: 'Gas', target: 'Grid', value: 13.8 },
          { source: 'Imports', target: 'Grid', value: 7.2 }, { source: 'Grid', target: 'Homes', value: 18.1 },
          { source: 'Grid', target: 'Industry', value: 14.6 }, { source: 'Grid', target: 'Services', value: 14.9 },
          { source: 'Grid', target: 'Transport', value: 1.9 }, { source: 'Grid', target: 'Losses', value: 3.7 }
        ] }]
    });
    const radar = echarts.init(document.getElementById('targets'), null, opts);
    radar.setOption({
      textStyle: { fontFamily: 'sans-serif' },
      legend: { bottom: 0 },
      radar: { radius: '62%', center: ['50%', '46%'], indicator: [
        { name: 'Renewable share', max: 100 }, { name: 'Storage (GW)', max: 10 }, { name: 'Interconnect (GW)', max: 15 },
        { name: 'Heat pumps (k)', max: 600 }, { name: 'EV chargers (k)', max: 80 } ] },
      series: [{ type: 'radar', data: [
        { name: '2030 target', value: [95, 8.5, 14, 600, 75], areaStyle: { opacity: 0.1 } },
        { name: 'Mid-2024', value: [52, 4.7, 9.8, 251, 61], areaStyle: { opacity: 0.3 } } ] }]
    });
  `;
  const body = `
    <header class="report"><div><h1>Electricity System Quarterly</h1><div>Generation mix, flows and 2030 targets</div></div>
      <div class="meta">Edition: Q2 2024<br>Office for Energy Statistics<br>Published 26 September 2024</div></header>
    <section class="grid">
      <div class="panel wide"><h2>Generation by source (TWh per quarter)</h2><div class="chart" id="mix" style="height:270px"></div></div>
      <div class="panel wide"><h2>Electricity flows, Q2 2024 (TWh)</h2><div class="chart" id="flows" style="height:260px"></div></div>
      <div class="panel"><h2>Progress towards 2030 targets</h2><div class="chart" id="targets" style="height:260px"></div></div>
      <div class="panel"><h2>Key points</h2>
        <ul style="font-size:9.5pt;line-height:1.5;padding-left:18px;margin:4px 0">
          <li>Renewables supplied 52.3% of generation in Q2 2024, the highest share for a second quarter on record.</li>
          <li>Gas-fired generation fell to 13.8 TWh, 20.2% lower than a year earlier.</li>
          <li>Solar output rose 13.6% year on year as 1.1 GW of new capacity connected.</li>
          <li>Net imports of 7.2 TWh met 14.1% of demand, mostly over the northern interconnectors.</li>
          <li>Nuclear output was 4.4% lower owing to statutory outages at two stations.</li>
        </ul></div>
    </section>
    <table class="data"><thead><tr><th>Source</th><th>Q2 2023</th><th>Q2 2024</th><th>Change</th></tr></thead><tbody>
      <tr><td>Wind</td><td>15.6</td><td>16.8</td><td>+7.7%</td></tr>
      <tr><td>Solar</td><td>5.9</td><td>6.7</td><td>+13.6%</td></tr>
      <tr><td>Hydro</td><td>1.0</td><td>1.1</td><td>+10.0%</td></tr>
      <tr><td>Nuclear</td><td>9.1</td><td>8.7</td><td>−4.4%</td></tr>
      <tr><td>Gas</td><td>17.3</td><td>13.8</td><td>−20.2%</td></tr></tbody></table>`;
  return {
    name: 'echarts-svg-energy',
    title: 'Energy statistics report: ECharts SVG renderer (stacked area, sankey, radar)',
    html: htmlDocument({
      lang: 'en-GB',
      title: 'Electricity System Quarterly — Q2 2024',
      head: inlineStyle(REPORT_CSS) + packageScript('echarts', 'dist/echarts.min.js'),
      body: body + inlineScript(script),
    }),
  };
}

function apexAnalytics(): FidelityCase {
  const days = Array.from({ length: 30 }, (_, i) => `Sep ${i + 1}`);
  const sessions = [
    5120, 4870, 6210, 6480, 6390, 6122, 5311, 4977, 6530, 6702, 6688, 6541, 6290, 5402, 5088, 6874, 7011, 7230, 6990, 6705, 5680,
    5320, 7102, 7389, 7455, 7201, 6930, 5876, 5503, 7480,
  ];
  const weekdays = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
  const hours = ['00', '03', '06', '09', '12', '15', '18', '21'];
  const heat = weekdays.map((day, d) => ({
    name: day,
    data: hours.map((hour, h) => ({ x: `${hour}:00`, y: Math.round((d < 5 ? 40 : 25) + 60 * Math.sin(((h + 1) / 9) * Math.PI) + d * 3) })),
  }));
  const script = `
    const base = { fontFamily: 'sans-serif', toolbar: { show: false } };
    new ApexCharts(document.querySelector('#sessions'), {
      chart: { ...base, type: 'area', height: 250 },
      series: [{ name: 'Sessions', data: ${JSON.stringify(sessions)} }],
      xaxis: { categories: ${JSON.stringify(days)}, tickAmount: 10 },
      dataLabels: { enabled: false }, stroke: { curve: 'smooth', width: 2 }, colors: ['#7c3aed'],
      fill: { type: 'gradient', gradient: { opacityFrom: 0.45, opacityTo: 0.05 } }
    }).render();
    new ApexCharts(document.querySelector('#channels'), {
      chart: { ...base, type: 'bar', height: 240, stacked: true },
      series: [
        { name: 'Organic search', data: [412, 388, 455] }, { name: 'Paid search', data: [198, 240, 261] },
        { name: 'Email', data: [154, 171, 149] }, { name: 'Social', data: [88, 97, 120] }
      ],
      xaxis: { categories: ['July', 'August', 'September'] },
      plotOptions: { bar: { columnWidth: '45%' } }, legend: { position: 'bottom' },
      colors: ['#0ea5e9', '#f59e0b', '#10b981', '#ef4444']
    }).render();
    new ApexCharts(document.querySelector('#goals'), {
      chart: { ...base, type: 'radialBar', height: 250 },
      series: [82, 67, 91],
      labels: ['Sign-ups', 'Trials started', 'Newsletter'],
      plotOptions: { radialBar: { dataLabels: { total: { show: true, label: 'Average', formatter: () => '80%' } } } },
      colors: ['#7c3aed', '#0ea5e9', '#10b981']
    }).render();
    new ApexCharts(document.querySelector('#heatmap'), {
      chart: { ...base, type: 'heatmap', height: 260 },
      series: ${JSON.stringify(heat)},
      dataLabels: { enabled: false }, colors: ['#7c3aed'],
      xaxis: { title: { text: 'Hour of day (UTC)' } }
    }).render();
  `;
  const body = `
    <header class="report"><div><h1>Website Analytics — September 2024</h1><div>fernleaf.example · marketing site and web app</div></div>
      <div class="meta">1–30 September 2024 (UTC)<br>Growth team monthly review<br>Generated 1 October 2024</div></header>
    ${kpis([
      ['Sessions', '189,305', '11.8% vs August', true],
      ['Conversion rate', '3.41%', '0.22 pt vs August', true],
      ['Bounce rate', '41.7%', '1.9 pt vs August', true],
      ['Avg. load time', '1.84 s', '0.12 s vs August', false],
    ])}
    <section class="grid">
      <div class="panel wide"><h2>Daily sessions</h2><div id="sessions"></div></div>
      <div class="panel"><h2>Conversions by channel</h2><div id="channels"></div></div>
      <div class="panel"><h2>Goal completion</h2><div id="goals"></div></div>
      <div class="panel wide"><h2>Traffic intensity by weekday and hour</h2><div id="heatmap"></div></div>
    </section>`;
  return {
    name: 'apexcharts-analytics',
    title: 'Web analytics report: ApexCharts (area, stacked column, radial bar, heatmap), default animation',
    html: htmlDocument({
      title: 'Website Analytics — September 2024',
      head: inlineStyle(REPORT_CSS) + packageScript('apexcharts', 'dist/apexcharts.min.js'),
      body: body + inlineScript(script),
    }),
    // ApexCharts' default animations (an 800 ms draw, then the radial bars and heatmap cells in turn)
    // end between 1.2 and 2 s after load here: more room than the default leaves.
    settleMs: 4000,
  };
}

function d3Rainfall(): FidelityCase {
  const rainfall = [
    ['Jan', 79.4, 68.2], ['Feb', 58.1, 52.7], ['Mar', 61.0, 49.9], ['Apr', 47.3, 51.6], ['May', 52.8, 48.3], ['Jun', 49.9, 55.1],
    ['Jul', 44.6, 53.0], ['Aug', 71.2, 59.4], ['Sep', 64.5, 56.8], ['Oct', 98.3, 77.1], ['Nov', 91.7, 79.5], ['Dec', 86.0, 80.2],
  ];
  const script = `
    const data = ${JSON.stringify(rainfall)}.map(([month, y2023, normal]) => ({ month, y2023, normal }));
    const margin = { top: 20, right: 20, bottom: 40, left: 52 };
    const width = 640 - margin.left - margin.right, height = 320 - margin.top - margin.bottom;
    const svg = d3.select('#chart').append('svg').attr('viewBox', [0, 0, 640, 320]).attr('width', '100%')
      .append('g').attr('transform', 'translate(' + margin.left + ',' + margin.top + ')');
    const x = d3.scaleBand().domain(data.map((d) => d.month)).range([0, width]).padding(0.25);
    const y = d3.scaleLinear().domain([0, 110]).nice().range([height, 0]);
    svg.append('g').attr('transform', 'translate(0,' + height + ')').call(d3.axisBottom(x));
    svg.append('g').call(d3.axisLeft(y).ticks(6)).call((g) => g.append('text').attr('x', -margin.left + 4).attr('y', -8)
      .attr('fill', 'currentColor').attr('text-anchor', 'start').text('Rainfall (mm)'));
    svg.append('g').attr('class', 'gridlines').call(d3.axisLeft(y).ticks(6).tickSize(-width).tickFormat(''))
      .call((g) => g.select('.domain').remove()).selectAll('line').attr('stroke', '#e4e7eb');
    svg.selectAll('rect.bar').data(data).join('rect').attr('class', 'bar')
      .attr('x', (d) => x(d.month)).attr('width', x.bandwidth())
      .attr('y', height).attr('height', 0).attr('fill', (d) => (d.y2023 > d.normal ? '#1d4ed8' : '#93c5fd'))
      .transition().duration(800).delay((d, i) => i * 40).ease(d3.easeCubicOut)
      .attr('y', (d) => y(d.y2023)).attr('height', (d) => height - y(d.y2023));
    const line = d3.line().x((d) => x(d.month) + x.bandwidth() / 2).y((d) => y(d.normal)).curve(d3.curveMonotoneX);
    const path = svg.append('path').datum(data).attr('fill', 'none').attr('stroke', '#dc2626').attr('stroke-width', 2.5).attr('d', line);
    const length = path.node().getTotalLength();
    path.attr('stroke-dasharray', length + ' ' + length).attr('stroke-dashoffset', length)
      .transition().delay(300).duration(900).ease(d3.easeLinear).attr('stroke-dashoffset', 0);
    svg.selectAll('circle.normal').data(data).join('circle').attr('class', 'normal')
      .attr('cx', (d) => x(d.month) + x.bandwidth() / 2).attr('cy', (d) => y(d.normal)).attr('r', 0).attr('fill', '#dc2626')
      .transition().delay((d, i) => 300 + i * 60).duration(300).attr('r', 3.5);
    const total = d3.sum(data, (d) => d.y2023), normalTotal = d3.sum(data, (d) => d.normal);
    d3.select('#total').text(d3.format('.1f')(total) + ' mm');
    d3.select('#anomaly').text(d3.format('+.1%')(total / normalTotal - 1));
  `;
  const css = `
    @page { size: A4; margin: 18mm; }
    body { font-family: serif; color: #222; max-width: 170mm; margin: 0 auto; line-height: 1.5; }
    h1 { font-family: sans-serif; font-size: 18pt; margin: 0 0 4px; }
    .sub { color: #555; font-family: sans-serif; margin-bottom: 16px; }
    figure { margin: 12px 0; } figcaption { font-size: 9pt; color: #555; font-family: sans-serif; }
    #chart svg { font-family: sans-serif; font-size: 11px; }
    .legend span { display: inline-block; margin-right: 16px; font: 9pt sans-serif; }
    .legend i { display: inline-block; width: 12px; height: 12px; vertical-align: -2px; margin-right: 4px; }
    dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; font-family: sans-serif; font-size: 10pt; }
    dt { font-weight: bold; }
  `;
  const body = `
    <h1>Rainfall at Kew Gardens, 2023</h1>
    <div class="sub">Monthly climate summary · Station 1923 (51.481° N, 0.295° W, 6 m above sea level)</div>
    <p>The year was wetter than the 1991–2020 average, with a notably dull and wet late autumn. October brought
      98.3&nbsp;mm, more than a quarter above normal, after a sequence of slow-moving Atlantic lows; July, by contrast,
      was the only summer month in the last decade to record more rain than August. April and June were close to normal.</p>
    <figure>
      <div id="chart"></div>
      <div class="legend"><span><i style="background:#1d4ed8"></i>Above normal</span><span><i style="background:#93c5fd"></i>Below normal</span><span><i style="background:#dc2626"></i>1991–2020 average</span></div>
      <figcaption>Figure 1. Monthly rainfall in 2023 (bars) against the 1991–2020 monthly average (line). Drawn with d3.</figcaption>
    </figure>
    <dl><dt>Annual total</dt><dd id="total"></dd><dt>Against average</dt><dd id="anomaly"></dd>
      <dt>Wettest day</dt><dd>20 October, 31.4 mm</dd><dt>Rain days (≥ 1 mm)</dt><dd>148</dd></dl>`;
  return {
    name: 'd3-rainfall',
    title: 'Climate summary: a d3 bar and line chart built with d3 transitions',
    html: htmlDocument({
      lang: 'en-GB',
      title: 'Rainfall at Kew Gardens, 2023',
      head: inlineStyle(css) + packageScript('d3', 'dist/d3.min.js'),
      body: body + inlineScript(script),
    }),
  };
}

export function chartCases(): FidelityCase[] {
  return [chartJsDashboard(), echartsOperations(), echartsEnergy(), apexAnalytics(), d3Rainfall()];
}
