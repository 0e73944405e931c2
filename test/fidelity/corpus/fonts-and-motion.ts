/**
 * Web fonts and motion. A magazine feature and a restaurant menu set in Lora and Playfair Display
 * from @fontsource, whose style sheets are inlined with every font file as a data: URL (what a
 * bundler does with them), unicode-range subsets included. A launch page whose sections fade and
 * slide in with CSS keyframes (fill-mode forwards), a status page whose bars grow by a CSS
 * transition started at load, and a results page whose figures count up by requestAnimationFrame
 * and finish within a second.
 */
import { esc, htmlDocument, inlineScript, inlineStyle, packageDataUrl, packageText } from './assets.ts';
import type { FidelityCase } from './types.ts';

/** A @fontsource style sheet with its font files inlined (woff2 only, as data: URLs). */
function fontsource(pkg: string, sheet: string): string {
  return packageText(pkg, sheet).replace(
    /src: url\(\.\/files\/([\w-]+)\.woff2\) format\('woff2'\), url\(\.\/files\/[\w-]+\.woff\) format\('woff'\)/g,
    (_, file: string) => `src: url(${packageDataUrl(pkg, `files/${file}.woff2`, 'font/woff2')}) format('woff2')`,
  );
}

const LORA = () => ['400.css', '400-italic.css', '700.css'].map((sheet) => fontsource('@fontsource/lora', sheet)).join('\n');
const PLAYFAIR = () => ['400.css', '700.css', '400-italic.css'].map((sheet) => fontsource('@fontsource/playfair-display', sheet)).join('\n');

function magazine(): FidelityCase {
  const css = `
    @page { size: A4; margin: 18mm 16mm; }
    body { font-family: 'Lora', serif; font-size: 10.5pt; line-height: 1.6; color: #2b2118; margin: 0; }
    .kicker { font: 700 8.5pt 'Lora', serif; letter-spacing: .18em; text-transform: uppercase; color: #a23b2a; }
    h1 { font-family: 'Playfair Display', serif; font-weight: 700; font-size: 34pt; line-height: 1.08; margin: 4px 0 10px; }
    .standfirst { font-family: 'Playfair Display', serif; font-style: italic; font-size: 14pt; line-height: 1.4; color: #5a4a3c; margin: 0 0 12px; }
    .byline { font-size: 9pt; border-top: 1px solid #d9cbb8; border-bottom: 1px solid #d9cbb8; padding: 5px 0; margin-bottom: 14px; }
    .columns { columns: 2; column-gap: 9mm; }
    .columns p { margin: 0 0 8px; text-align: justify; }
    .columns p:first-child::first-letter { font-family: 'Playfair Display', serif; font-weight: 700; float: left; font-size: 44pt; line-height: .85; margin: 4px 6px 0 0; color: #a23b2a; }
    h2 { font-family: 'Playfair Display', serif; font-size: 15pt; margin: 12px 0 4px; break-after: avoid; }
    blockquote { column-span: all; font-family: 'Playfair Display', serif; font-style: italic; font-size: 19pt; line-height: 1.3;
      text-align: center; margin: 14px 20mm; padding: 8px 0; border-top: 2px solid #a23b2a; border-bottom: 2px solid #a23b2a; }
    .ru { font-family: 'Lora', serif; font-style: italic; }
    .sidebar { background: #f4ede3; padding: 8px 10px; break-inside: avoid; font-size: 9.5pt; }
    .sidebar h3 { font-family: 'Playfair Display', serif; margin: 0 0 4px; font-size: 12pt; }
  `;
  const body = `
    <div class="kicker">Food &amp; Travel · Cornwall</div>
    <h1>The Last Pilchard Cellar on the Lizard</h1>
    <p class="standfirst">For three hundred years the fish came in their millions every autumn. Then, almost overnight, they stopped.
      In Porthleven, one family still salts them the old way.</p>
    <div class="byline">Words by <b>Tamsin Rowe</b> · Photographs by <b>Jago Pender</b> · Issue 41, Autumn 2024</div>
    <div class="columns">
      <p>The cellar smells of salt and cold stone before it smells of fish. Along the back wall, under a slate roof that has been
      patched more times than anyone can count, the barrels stand in two rows, each topped with a round of oak and a granite
      weight the size of a loaf. “My grandfather pressed them with the same stones,” says Nick Harvey, who is sixty-three and
      has worked here since he left school. “You don’t change what works.”</p>
      <p>What works is simple and slow. The pilchards — sardines, to anyone under fifty — are laid head to tail in dry salt, layer
      upon layer, and left for a month while the weight presses out the oil. The oil once lit the lamps of half the county;
      now it goes to a soap-maker in Truro, who sells it back to tourists at four pounds a bar.</p>
      <h2>A coast built on a fish</h2>
      <p>It is hard now to picture how completely the pilchard ruled this coast. In a good year in the 1870s, the seine boats of
      St Ives landed so many that the fish were sold by the thousand and carted inland as fertiliser. Huers stood on the cliffs
      with a speaking trumpet and a pair of gorse bushes, signalling to the boats where the shoals were darkening the water.</p>
      <blockquote>“You don’t change what works. My grandfather pressed them with the same stones.”</blockquote>
      <p>Then the shoals moved. Nobody agrees why: warmer water, overfishing, the long cycles of the Atlantic. By the 1960s most
      cellars had become holiday flats. The Harveys kept theirs because, as Nick puts it, “nobody told us to stop.” Their salted
      fish now go to a handful of restaurants in London and, improbably, to a delicatessen in Moscow whose owner wrote to them
      in 2009 with a line of Pushkin — <span class="ru" lang="ru">«Ещё одно, последнее сказанье»</span> — and an order for
      forty kilos.</p>
      <p>The season runs from late August until the first gales of October. Visitors may watch the pressing on weekday mornings,
      and the family sells jars of the finished fish from a hatch in the cellar door — cash only, and never on a Sunday.</p>
      <div class="sidebar"><h3>If you go</h3>Harvey’s Cellar, Commercial Road, Porthleven TR13 9JD. Open Monday to Friday,
      9am–noon, from 26 August to 11 October. Tours £6, children free. The café next door serves the cellar’s pilchards
      on toast with pickled fennel (£8.50).</div>
    </div>`;
  return {
    name: 'webfonts-magazine',
    title: 'Magazine feature in Lora and Playfair Display: @fontsource style sheets with woff2 data: URLs and unicode-range subsets',
    html: htmlDocument({
      lang: 'en-GB',
      title: 'The Last Pilchard Cellar on the Lizard',
      head: inlineStyle(LORA() + PLAYFAIR()) + inlineStyle(css),
      body,
    }),
  };
}

function menu(): FidelityCase {
  const courses = [
    ['To begin', [
      ['Porthleven crab on toasted sourdough', 'brown crab mayonnaise, pickled cucumber, dill', '12.50'],
      ['Roasted beetroot and Cornish Yarg', 'candied walnuts, watercress, aged balsamic', '9.00'],
      ['Salt-cured pilchards', 'charred fennel, blood orange, crème fraîche', '10.00'],
    ]],
    ['Mains', [
      ['Day-boat hake', 'crushed new potatoes, samphire, brown shrimp beurre noisette', '24.00'],
      ['Slow-roast pork belly', 'black pudding, apple purée, cider jus', '22.50'],
      ['Wild mushroom risotto', 'Parmesan, truffle oil, pea shoots', '18.00'],
      ['Rump of lamb', 'smoked aubergine, salsa verde, anchovy crumb', '27.00'],
    ]],
    ['Puddings', [
      ['Saffron bun and butter pudding', 'clotted cream, rum-soaked raisins', '8.50'],
      ['Dark chocolate délice', 'sea-salt caramel, hazelnut praline', '9.00'],
      ['Westcountry cheeses', 'quince, oatcakes, celery', '11.00'],
    ]],
  ] as const;
  const css = `
    @page { size: A5; margin: 14mm 14mm 12mm; }
    body { font-family: 'Lora', serif; color: #1f2a24; margin: 0; text-align: center; font-size: 9.5pt; }
    h1 { font-family: 'Playfair Display', serif; font-weight: 400; font-style: italic; font-size: 30pt; margin: 0; color: #234d3b; }
    .tag { letter-spacing: .3em; text-transform: uppercase; font-size: 7.5pt; margin-bottom: 6mm; }
    h2 { font-family: 'Playfair Display', serif; font-weight: 700; font-size: 12pt; letter-spacing: .12em; text-transform: uppercase;
      color: #234d3b; margin: 5mm 0 2mm; }
    h2::before, h2::after { content: '—'; margin: 0 .5em; font-weight: 400; color: #9c8b5c; }
    .dish { margin: 0 0 2.5mm; }
    .dish b { font-weight: 700; } .dish .price { font-family: 'Playfair Display', serif; color: #9c8b5c; margin-left: .4em; }
    .dish i { display: block; font-size: 8.5pt; color: #55625a; }
    footer { margin-top: 5mm; font-size: 7.5pt; font-style: italic; color: #55625a; }
  `;
  const body = `
    <h1>The Ship Inn</h1><div class="tag">Mousehole · Autumn menu</div>
    ${courses
      .map(
        ([course, dishes]) =>
          `<h2>${esc(course)}</h2>${dishes.map(([dish, description, price]) => `<div class="dish"><b>${esc(dish)}</b><span class="price">${price}</span><i>${esc(description)}</i></div>`).join('')}`,
      )
      .join('')}
    <footer>Please tell us about any allergies before you order. A discretionary service charge of 10% is added to tables of six or more.</footer>`;
  return {
    name: 'webfonts-menu-a5',
    title: 'Restaurant menu on A5 in Playfair Display (regular, italic, bold) and Lora, fonts inlined as data: URLs',
    html: htmlDocument({ lang: 'en-GB', title: 'The Ship Inn — Autumn menu', head: inlineStyle(PLAYFAIR() + LORA()) + inlineStyle(css), body }),
  };
}

const LAUNCH_CSS = `
  @page { size: A4; margin: 16mm; }
  body { font-family: sans-serif; color: #0f172a; margin: 0; }
  @keyframes fade-up { from { opacity: 0; transform: translateY(24px); } to { opacity: 1; transform: none; } }
  @keyframes slide-in { from { opacity: 0; transform: translateX(-40px); } to { opacity: 1; transform: none; } }
  @keyframes grow { from { width: 0; } }
  .hero { background: linear-gradient(135deg, #4338ca, #0ea5e9); color: #fff; border-radius: 12px; padding: 28px 32px;
    opacity: 0; animation: fade-up 700ms ease-out 100ms forwards; }
  .hero h1 { margin: 0 0 6px; font-size: 26pt; }
  .hero p { margin: 0; font-size: 12pt; opacity: .9; }
  .cards { display: grid; grid-template-columns: repeat(3, 1fr); gap: 14px; margin-top: 18px; }
  .card { border: 1px solid #e2e8f0; border-radius: 10px; padding: 14px; opacity: 0; animation: slide-in 500ms ease-out forwards; }
  .card:nth-child(1) { animation-delay: 300ms; } .card:nth-child(2) { animation-delay: 450ms; } .card:nth-child(3) { animation-delay: 600ms; }
  .card h3 { margin: 0 0 4px; color: #4338ca; }
  .metric { margin-top: 18px; }
  .metric .label { display: flex; justify-content: space-between; font-size: 10pt; margin-bottom: 4px; }
  .track { background: #e2e8f0; border-radius: 99px; height: 12px; overflow: hidden; }
  .fill { height: 12px; border-radius: 99px; background: #0ea5e9; animation: grow 900ms cubic-bezier(.2,.8,.2,1) 200ms both; }
  .timeline { margin-top: 22px; border-left: 3px solid #c7d2fe; padding-left: 16px; }
  .timeline div { margin-bottom: 10px; opacity: 0; animation: fade-up 400ms ease-out forwards; }
  .timeline div:nth-child(1) { animation-delay: 700ms; } .timeline div:nth-child(2) { animation-delay: 800ms; }
  .timeline div:nth-child(3) { animation-delay: 900ms; } .timeline div:nth-child(4) { animation-delay: 1000ms; }
`;

function cssKeyframes(): FidelityCase {
  const metrics = [
    ['Beta sign-ups', '8,412 of 10,000', 84],
    ['Crash-free sessions', '99.2%', 99],
    ['App Store rating', '4.6 of 5', 92],
  ] as const;
  const body = `
    <section class="hero"><h1>Harbour 2.0 is here</h1><p>Offline maps, live tide tables and a redesigned logbook for skippers — launching 2 September 2024.</p></section>
    <section class="cards">
      <div class="card"><h3>Offline charts</h3>Download Admiralty-grade charts for a whole coast and navigate without a signal.</div>
      <div class="card"><h3>Live tides</h3>Heights and streams for 600 ports, updated every six hours from the national tide gauge network.</div>
      <div class="card"><h3>Digital logbook</h3>Every passage recorded automatically, ready to export for your insurer or the harbour office.</div>
    </section>
    ${metrics
      .map(
        ([label, value, percent]) =>
          `<div class="metric"><div class="label"><span>${esc(label)}</span><b>${esc(value)}</b></div><div class="track"><div class="fill" style="width:${percent}%"></div></div></div>`,
      )
      .join('')}
    <section class="timeline">
      <div><b>12 August</b> — release candidate to beta testers</div>
      <div><b>26 August</b> — press preview in Falmouth</div>
      <div><b>2 September</b> — public launch on iOS and Android</div>
      <div><b>October</b> — chart packs for Brittany and the Channel Islands</div>
    </section>`;
  return {
    name: 'css-keyframe-animations',
    title: 'Launch page whose sections fade and slide in by CSS keyframes (fill-mode forwards, staggered delays, ends by 1.4 s)',
    html: htmlDocument({ lang: 'en-GB', title: 'Harbour 2.0 launch', head: inlineStyle(LAUNCH_CSS), body }),
  };
}

function cssTransitionOnLoad(): FidelityCase {
  const services = [
    ['Website', 99.98, 'Operational'], ['Booking API', 99.91, 'Operational'], ['Payments', 99.62, 'Degraded on 14 Jun'],
    ['Mobile push', 99.99, 'Operational'], ['Email receipts', 98.87, 'Incident on 3 Jun'], ['Partner feeds', 99.95, 'Operational'],
  ] as const;
  const css = `
    @page { size: A4; margin: 16mm; }
    body { font-family: sans-serif; color: #111827; margin: 0; }
    h1 { font-size: 20pt; margin: 0; } .sub { color: #6b7280; margin: 2px 0 16px; }
    .row { display: grid; grid-template-columns: 150px 1fr 70px; align-items: center; gap: 12px; padding: 8px 0; border-bottom: 1px solid #e5e7eb; }
    .bar { height: 14px; background: #f3f4f6; border-radius: 4px; overflow: hidden; }
    .bar span { display: block; height: 100%; width: 0; background: #10b981; transition: width 800ms ease-out, background-color 800ms; }
    .bar span.warn { background: #f59e0b; }
    .loaded .bar span { width: var(--uptime); }
    .badge { font-size: 8pt; color: #6b7280; }
    .summary { margin-top: 18px; padding: 12px; border-radius: 8px; background: #ecfdf5; opacity: 0; transform: scale(.96);
      transition: opacity 600ms ease-out 300ms, transform 600ms ease-out 300ms; }
    .loaded .summary { opacity: 1; transform: none; }
  `;
  const body = `
    <h1>Service availability — June 2024</h1><div class="sub">Tidewater Travel platform · monthly uptime report · measured every minute from three regions</div>
    ${services
      .map(
        ([name, uptime, note]) =>
          `<div class="row"><div><b>${esc(name)}</b><div class="badge">${esc(note)}</div></div><div class="bar"><span class="${uptime < 99.9 ? 'warn' : ''}" style="--uptime:${uptime}%"></span></div><div style="text-align:right">${uptime.toFixed(2)}%</div></div>`,
      )
      .join('')}
    <div class="summary"><b>Overall: 99.72%</b> against a target of 99.9%. Two incidents breached the target: the email provider’s outage on
      3 June (2 h 41 min) and a payment gateway slowdown on 14 June (1 h 12 min). Post-incident reviews are attached.</div>`;
  const script = `window.addEventListener('load', () => requestAnimationFrame(() => document.body.classList.add('loaded')));`;
  return {
    name: 'css-transition-on-load',
    title: 'Uptime report whose bars grow and summary fades in by CSS transitions triggered at the load event',
    html: htmlDocument({ lang: 'en-GB', title: 'Service availability — June 2024', head: inlineStyle(css), body: body + inlineScript(script) }),
  };
}

function rafCounters(): FidelityCase {
  const css = `
    @page { size: A4; margin: 18mm; }
    body { font-family: sans-serif; color: #1e1b4b; margin: 0; }
    h1 { font-size: 20pt; margin: 0 0 4px; } .sub { color: #6366f1; margin-bottom: 18px; }
    .stats { display: grid; grid-template-columns: repeat(3, 1fr); gap: 16px; }
    .stat { background: #eef2ff; border-radius: 10px; padding: 16px; text-align: center; }
    .stat .n { font-size: 28pt; font-weight: bold; font-variant-numeric: tabular-nums; }
    .stat .l { font-size: 9pt; text-transform: uppercase; letter-spacing: .06em; color: #4338ca; }
    .rings { display: flex; justify-content: space-around; margin-top: 24px; }
    .rings figure { margin: 0; text-align: center; font-size: 10pt; }
    p { line-height: 1.5; }
  `;
  const body = `
    <h1>Fundraising results 2024</h1><div class="sub">St Piran’s Hospice · Summer Appeal · final figures, 31 August 2024</div>
    <section class="stats">
      <div class="stat"><div class="n" data-to="412860" data-prefix="£">£0</div><div class="l">Raised</div></div>
      <div class="stat"><div class="n" data-to="3917">0</div><div class="l">Donors</div></div>
      <div class="stat"><div class="n" data-to="126">0</div><div class="l">Events held</div></div>
    </section>
    <div class="rings">
      <figure><canvas width="160" height="160" data-share="0.82"></canvas><figcaption>Target reached: 82%</figcaption></figure>
      <figure><canvas width="160" height="160" data-share="0.64"></canvas><figcaption>Gift Aid claimed: 64%</figcaption></figure>
      <figure><canvas width="160" height="160" data-share="0.37"></canvas><figcaption>New donors: 37%</figcaption></figure>
    </div>
    <p>Thank you to everyone who ran, baked, swam and sang for the hospice this summer. The appeal will fund two more nurses for the
      hospice-at-home team for a full year, so that more families in west Cornwall can care for someone they love at home.</p>`;
  const script = `
    const DURATION = 900;
    const ease = (t) => 1 - Math.pow(1 - t, 3);
    const counters = [...document.querySelectorAll('[data-to]')];
    const rings = [...document.querySelectorAll('canvas[data-share]')];
    function drawRing(canvas, share) {
      const g = canvas.getContext('2d'), r = 64, c = 80;
      g.clearRect(0, 0, 160, 160);
      g.lineWidth = 16; g.lineCap = 'round';
      g.strokeStyle = '#e0e7ff'; g.beginPath(); g.arc(c, c, r, 0, Math.PI * 2); g.stroke();
      g.strokeStyle = '#4f46e5'; g.beginPath(); g.arc(c, c, r, -Math.PI / 2, -Math.PI / 2 + Math.PI * 2 * share); g.stroke();
      g.fillStyle = '#1e1b4b'; g.font = 'bold 26px sans-serif'; g.textAlign = 'center'; g.textBaseline = 'middle';
      g.fillText(Math.round(share * 100) + '%', c, c);
    }
    let start;
    function frame(now) {
      start ??= now;
      const t = Math.min(1, (now - start) / DURATION), k = ease(t);
      for (const el of counters) {
        const value = Math.round(Number(el.dataset.to) * k);
        el.textContent = (el.dataset.prefix || '') + value.toLocaleString('en-GB');
      }
      for (const canvas of rings) drawRing(canvas, Number(canvas.dataset.share) * k);
      if (t < 1) requestAnimationFrame(frame);
    }
    requestAnimationFrame(frame);
  `;
  return {
    name: 'raf-counters',
    title: 'Fundraising results whose figures count up and rings fill by requestAnimationFrame, finished in 0.9 s',
    html: htmlDocument({ lang: 'en-GB', title: 'Fundraising results 2024', head: inlineStyle(css), body: body + inlineScript(script) }),
  };
}

export function fontMotionCases(): FidelityCase[] {
  return [magazine(), menu(), cssKeyframes(), cssTransitionOnLoad(), rafCounters()];
}
