/**
 * Plain business documents as small firms write them by hand in HTML and CSS: a formal letter, an
 * invoice that runs to two pages, a one-page résumé, a till receipt on 80 mm roll paper and a
 * 4 × 6 inch shipping label with a barcode drawn in CSS.
 */
import { readFileSync } from 'node:fs';
import { esc, htmlDocument, inlineStyle, money, seededRandom } from './assets.ts';
import type { FidelityCase } from './types.ts';

function letter(): FidelityCase {
  const css = `
    @page { size: A4; margin: 16mm 22mm 22mm 25mm; }
    body { font-family: serif; font-size: 11pt; line-height: 1.5; color: #111; margin: 0; }
    .letterhead { display: flex; justify-content: space-between; border-bottom: 1px solid #7a1f2b; padding-bottom: 4mm; margin-bottom: 8mm; }
    .letterhead .name { font-size: 18pt; letter-spacing: .08em; color: #7a1f2b; font-variant: small-caps; }
    .letterhead .contact { text-align: right; font-size: 8.5pt; line-height: 1.4; font-family: sans-serif; color: #444; }
    .recipient { margin-bottom: 7mm; }
    .date { margin-bottom: 6mm; }
    .subject { font-weight: bold; margin-bottom: 5mm; }
    p { margin: 0 0 4mm; }
    .closing { margin-top: 6mm; }
    .signature { font-family: cursive, serif; font-size: 20pt; color: #1e3a8a; margin: 4mm 0 1mm; }
    .footer { position: fixed; bottom: 0; left: 0; right: 0; font: 7.5pt sans-serif; color: #666; text-align: center; }
  `;
  const body = `
    <div class="letterhead"><div class="name">Pengelly &amp; Hart<div style="font-size:9pt;letter-spacing:.05em;font-variant:normal;color:#444">Chartered Surveyors</div></div>
      <div class="contact">14 Lemon Street<br>Truro TR1 2LS<br>01872 555 014<br>office@pengellyhart.example</div></div>
    <div class="recipient">Mr and Mrs D. Chenoweth<br>Rose Cottage<br>Church Lane<br>St Keverne<br>Helston TR12 6NB</div>
    <div class="date">Our ref: PH/24/0387 · 18 October 2024</div>
    <p>Dear Mr and Mrs Chenoweth,</p>
    <div class="subject">Building survey: Rose Cottage, Church Lane, St Keverne</div>
    <p>Thank you for your instructions of 9 October. I inspected the property on Tuesday 15 October in dry, overcast weather, and
      I enclose my full report. This letter summarises the matters you should consider before you exchange contracts.</p>
    <p>The cottage is, in general, in the condition one would expect of a granite building of its age, about 180 years. The walls
      are sound and there is no sign of structural movement. The roof was re-covered in natural slate about twenty years ago and
      is in good order, although several ridge tiles need re-bedding.</p>
    <p>Three matters need attention. First, there is rising damp in the rear wall of the kitchen, caused by the modern cement
      render, which traps moisture; it should be replaced with lime render. Second, the electrical installation is old and has no
      residual-current protection; a qualified electrician should test it before you move in. Third, the septic tank is shared
      with the neighbouring property, and your solicitor should confirm that the rights and maintenance obligations are recorded
      in the deeds.</p>
    <p>I estimate the cost of the repairs at between £9,500 and £13,000, including VAT. You may wish to obtain quotations and raise
      the matter with the seller before agreeing the price.</p>
    <p>Please do not hesitate to telephone me if anything in the report is unclear.</p>
    <div class="closing">Yours sincerely,</div>
    <div class="signature">Eleanor Hart</div>
    <div>Eleanor Hart MRICS<br>Partner</div>
    <p style="margin-top:5mm;font-size:9.5pt">Enc. Building survey report (42 pages); invoice PH/24/0387.</p>
    <div class="footer">Pengelly &amp; Hart LLP is a limited liability partnership registered in England and Wales, no. OC318442. Regulated by RICS.</div>`;
  return {
    name: 'business-letter',
    title: 'Formal business letter: letterhead, addresses, reference line, signature, fixed footer',
    html: htmlDocument({ lang: 'en-GB', title: 'Letter PH/24/0387 — Building survey, Rose Cottage', head: inlineStyle(css), body }),
  };
}

function longInvoice(): FidelityCase {
  const random = seededRandom(5150);
  const products = [
    'Arabica coffee beans, Brazil Santos, 1 kg', 'Arabica coffee beans, Ethiopia Yirgacheffe, 1 kg', 'Decaf coffee beans, Colombia, 1 kg',
    'Oat milk, barista edition, 1 L (case of 6)', 'Whole milk, organic, 2 L', 'Paper cups 8 oz, compostable (box of 1000)',
    'Paper cups 12 oz, compostable (box of 1000)', 'Lids for 8 oz cups (box of 1000)', 'Lids for 12 oz cups (box of 1000)',
    'Wooden stirrers (box of 1000)', 'Brown sugar sticks (box of 1000)', 'Hot chocolate powder, 2 kg', 'Chai latte syrup, 1 L',
    'Vanilla syrup, 1 L', 'Caramel syrup, 1 L', 'Loose leaf English breakfast tea, 500 g', 'Peppermint tea bags (box of 250)',
    'Napkins, recycled, two-ply (pack of 2000)', 'Descaling tablets (tub of 100)', 'Group head cleaning powder, 900 g',
  ];
  const deliveries = ['2 Sep', '9 Sep', '16 Sep', '23 Sep', '30 Sep'];
  let subtotal = 0;
  const rows: string[] = [];
  for (const delivery of deliveries) {
    rows.push(`<tr class="delivery"><td colspan="5">Delivery ${delivery} 2024 · note DN-${4400 + deliveries.indexOf(delivery)}</td></tr>`);
    const count = 6 + Math.floor(random() * 4);
    for (let i = 0; i < count; i++) {
      const product = products[Math.floor(random() * products.length)]!;
      const qty = 1 + Math.floor(random() * 12);
      const price = Math.round((3 + random() * 45) * 100) / 100;
      subtotal += qty * price;
      rows.push(`<tr><td>SKU-${String(10000 + Math.floor(random() * 89999))}</td><td>${esc(product)}</td><td class="num">${qty}</td><td class="num">${money(price, '£')}</td><td class="num">${money(qty * price, '£')}</td></tr>`);
    }
  }
  const vat = Math.round(subtotal * 0.2 * 100) / 100;
  const css = `
    @page { size: A4; margin: 16mm 15mm 20mm;
      @bottom-right { content: "Invoice 2024-09-0412 · page " counter(page) " of " counter(pages); font: 8pt sans-serif; color: #666; } }
    body { font-family: sans-serif; font-size: 9.5pt; color: #222; margin: 0; }
    .top { display: flex; justify-content: space-between; align-items: flex-start; margin-bottom: 8mm; }
    .brand { font-size: 20pt; font-weight: 800; color: #6b3e26; }
    .brand small { display: block; font-size: 8.5pt; font-weight: normal; color: #555; }
    h1 { margin: 0; font-size: 22pt; text-align: right; letter-spacing: .05em; }
    .meta { text-align: right; line-height: 1.5; }
    .parties { display: flex; gap: 10mm; margin-bottom: 6mm; }
    .parties div { flex: 1; background: #faf6f2; padding: 3mm 4mm; border-radius: 2mm; line-height: 1.45; }
    table { width: 100%; border-collapse: collapse; }
    thead th { text-align: left; border-bottom: 2px solid #6b3e26; padding: 2mm; }
    td { padding: 1.6mm 2mm; border-bottom: 1px solid #eee; }
    tr { break-inside: avoid; }
    tr.delivery td { background: #f3ebe4; font-weight: bold; color: #6b3e26; }
    .num { text-align: right; white-space: nowrap; }
    .totals { margin-top: 5mm; margin-left: auto; width: 75mm; break-inside: avoid; }
    .totals div { display: flex; justify-content: space-between; padding: 1.2mm 0; }
    .totals .grand { border-top: 2px solid #222; font-weight: bold; font-size: 12pt; }
    .terms { margin-top: 8mm; font-size: 8.5pt; color: #555; break-inside: avoid; }
  `;
  const body = `
    <div class="top"><div class="brand">Bean &amp; Bramble<small>Coffee &amp; café supplies · Unit 7, Kernick Industrial Estate, Penryn TR10 9EP</small></div>
      <div><h1>INVOICE</h1><div class="meta">No. 2024-09-0412<br>Date: 30 September 2024<br>Terms: 30 days<br>Account: CAF-0218</div></div></div>
    <div class="parties"><div><b>Invoice to</b><br>The Harbour Kitchen<br>Attn: Lowenna Bray<br>2 Quay Street<br>Falmouth TR11 3HH</div>
      <div><b>Deliver to</b><br>The Harbour Kitchen<br>Rear entrance, Quay Street<br>Deliveries before 9am, Monday–Friday</div></div>
    <table><thead><tr><th>Code</th><th>Description</th><th class="num">Qty</th><th class="num">Unit price</th><th class="num">Amount</th></tr></thead>
      <tbody>${rows.join('\n')}</tbody></table>
    <div class="totals"><div><span>Subtotal</span><span>${money(subtotal, '£')}</span></div><div><span>VAT at 20%</span><span>${money(vat, '£')}</span></div>
      <div class="grand"><span>Total due</span><span>${money(subtotal + vat, '£')}</span></div></div>
    <div class="terms"><b>Payment</b> by 30 October 2024 to Bean &amp; Bramble Ltd, sort code 30-94-57, account 10334289. Goods remain our property until paid
      for in full. Please report any shortages within 48 hours of delivery. VAT registration GB 402 8813 61.</div>`;
  return {
    name: 'business-invoice-2-pages',
    title: 'Supplier invoice of a month of deliveries running onto a second page, page counter in a margin box',
    html: htmlDocument({ lang: 'en-GB', title: 'Invoice 2024-09-0412 — Bean & Bramble', head: inlineStyle(css), body }),
  };
}

function resume(): FidelityCase {
  const css = `
    @page { size: A4; margin: 0; }
    body { font-family: sans-serif; font-size: 9.5pt; line-height: 1.45; color: #1f2937; margin: 0; }
    .page { display: grid; grid-template-columns: 62mm 1fr; min-height: 297mm; }
    aside { background: #0f2b46; color: #e5edf5; padding: 16mm 8mm 10mm 10mm; }
    aside h1 { font-size: 20pt; line-height: 1.15; margin: 0 0 2mm; color: #fff; }
    aside .role { color: #7dd3fc; font-weight: 600; margin-bottom: 8mm; }
    aside h2 { font-size: 9pt; letter-spacing: .15em; text-transform: uppercase; color: #7dd3fc; margin: 7mm 0 2mm; }
    aside ul { list-style: none; padding: 0; margin: 0; }
    aside li { margin-bottom: 1.5mm; }
    .skill { display: flex; justify-content: space-between; align-items: center; }
    .dots span { display: inline-block; width: 2.2mm; height: 2.2mm; border-radius: 50%; background: #7dd3fc; margin-left: .8mm; }
    .dots span.off { background: #35506b; }
    main { padding: 16mm 14mm 10mm 10mm; }
    main h2 { font-size: 11pt; letter-spacing: .1em; text-transform: uppercase; color: #0f2b46; border-bottom: 2px solid #0f2b46; padding-bottom: 1mm; margin: 0 0 3mm; }
    section { margin-bottom: 6mm; }
    .job { margin-bottom: 4mm; break-inside: avoid; }
    .job .head { display: flex; justify-content: space-between; }
    .job .head b { font-size: 10.5pt; }
    .job .where { color: #475569; font-style: italic; }
    .job ul { margin: 1mm 0 0; padding-left: 4.5mm; }
  `;
  const dots = (n: number) => `<span class="dots">${Array.from({ length: 5 }, (_, i) => `<span class="${i < n ? '' : 'off'}"></span>`).join('')}</span>`;
  const body = `
    <div class="page">
      <aside>
        <h1>Daniel<br>Okonkwo-Price</h1><div class="role">Senior Data Engineer</div>
        <h2>Contact</h2><ul><li>Bristol, United Kingdom</li><li>+44 7700 900 418</li><li>daniel.op@mail.example</li><li>github.com/dokp</li></ul>
        <h2>Skills</h2><ul>
          <li class="skill">Python ${dots(5)}</li><li class="skill">SQL ${dots(5)}</li><li class="skill">Spark ${dots(4)}</li>
          <li class="skill">Airflow ${dots(4)}</li><li class="skill">Kafka ${dots(3)}</li><li class="skill">Terraform ${dots(3)}</li></ul>
        <h2>Languages</h2><ul><li>English — native</li><li>Igbo — conversational</li><li>French — professional</li></ul>
        <h2>Interests</h2><ul><li>Open-water swimming</li><li>Community radio (DJ since 2016)</li><li>Teaching Python at Code Club</li></ul>
      </aside>
      <main>
        <section><h2>Profile</h2><p>Data engineer with nine years’ experience building reliable pipelines for energy and retail companies.
          I like turning messy operational data into tables people trust, and I care about testing, documentation and on-call sanity.</p></section>
        <section><h2>Experience</h2>
          <div class="job"><div class="head"><b>Senior Data Engineer</b><span>2021 – present</span></div><div class="where">Octant Energy, Bristol</div>
            <ul><li>Led the move from nightly batch jobs to streaming meter readings (Kafka, Spark Structured Streaming) for 1.8 million homes.</li>
            <li>Cut the warehouse bill by 38% by partitioning and clustering the largest fact tables.</li>
            <li>Introduced data contracts and dbt tests; incidents caused by upstream schema changes fell from 14 to 2 a quarter.</li></ul></div>
          <div class="job"><div class="head"><b>Data Engineer</b><span>2018 – 2021</span></div><div class="where">Harbour &amp; Field (retail), Bath</div>
            <ul><li>Built the Airflow platform that runs 240 daily pipelines for finance, buying and e-commerce.</li>
            <li>Designed the customer data model behind the loyalty programme’s personalised offers.</li></ul></div>
          <div class="job"><div class="head"><b>Analyst, then Junior Data Engineer</b><span>2015 – 2018</span></div><div class="where">Wessex Water, Bath</div>
            <ul><li>Automated leakage reporting that had taken two analysts three days a month.</li></ul></div>
        </section>
        <section><h2>Education</h2>
          <div class="job"><div class="head"><b>MSc Data Science</b><span>2014 – 2015</span></div><div class="where">University of Bath — Distinction</div></div>
          <div class="job"><div class="head"><b>BSc Mathematics</b><span>2011 – 2014</span></div><div class="where">University of Exeter — First class</div></div>
        </section>
        <section><h2>Certifications</h2><p>Google Cloud Professional Data Engineer (2023) · Databricks Certified Data Engineer Associate (2022)</p></section>
      </main>
    </div>`;
  return {
    name: 'business-resume',
    title: 'One-page résumé with a full-bleed sidebar (CSS grid, @page margin 0), skill ratings drawn in CSS',
    html: htmlDocument({ lang: 'en-GB', title: 'Daniel Okonkwo-Price — Senior Data Engineer', head: inlineStyle(css), body }),
  };
}

function receipt(): FidelityCase {
  const items = [
    ['Flat white (oat)', 1, 3.6], ['Cortado', 2, 3.1], ['Cheese & leek pasty', 1, 5.25], ['Saffron bun', 2, 2.4],
    ['Sparkling water 330 ml', 1, 1.9], ['Carrot cake slice', 1, 3.75],
  ] as const;
  const total = items.reduce((sum, [, qty, price]) => sum + qty * price, 0);
  const vat = Math.round((total / 6) * 100) / 100;
  const css = `
    @page { size: 80mm 200mm; margin: 4mm 5mm; }
    body { font-family: monospace; font-size: 9pt; line-height: 1.35; margin: 0; color: #000; }
    .center { text-align: center; }
    .shop { font-size: 13pt; font-weight: bold; }
    hr { border: 0; border-top: 1px dashed #000; margin: 2mm 0; }
    .line { display: flex; justify-content: space-between; }
    .total { font-size: 12pt; font-weight: bold; }
    .barcode { height: 12mm; margin: 3mm 6mm 1mm; background: repeating-linear-gradient(90deg, #000 0 1px, #fff 1px 3px, #000 3px 5px, #fff 5px 6px, #000 6px 7px, #fff 7px 9px); }
  `;
  const body = `
    <div class="center"><div class="shop">THE QUAYSIDE CAFÉ</div>3 Custom House Quay<br>Falmouth TR11 3JT<br>VAT No. GB 284 1193 27</div>
    <hr><div class="line"><span>Till 2 · Table 14</span><span>Server: Jenna</span></div><div class="line"><span>Sat 19 Oct 2024</span><span>12:47</span></div><hr>
    ${items.map(([name, qty, price]) => `<div class="line"><span>${qty} × ${esc(name)}</span><span>${money(qty * price, '£')}</span></div>`).join('')}
    <hr><div class="line total"><span>TOTAL</span><span>${money(total, '£')}</span></div>
    <div class="line"><span>Card (contactless)</span><span>${money(total, '£')}</span></div>
    <div class="line"><span>incl. VAT 20%</span><span>${money(vat, '£')}</span></div><hr>
    <div>VISA DEBIT **** **** **** 4821<br>AID A0000000031010<br>Auth code 093417 · Approved</div><hr>
    <div class="center">Thank you for visiting!<br>Join our loyalty scheme: every 8th coffee free ☕</div>
    <div class="barcode"></div><div class="center">R-2024-10-19-0214</div>`;
  return {
    name: 'business-receipt-80mm',
    title: 'Café till receipt on 80 mm roll paper (@page size: 80mm 200mm), monospace, CSS barcode',
    html: htmlDocument({ lang: 'en-GB', title: 'Receipt R-2024-10-19-0214', head: inlineStyle(css), body }),
  };
}

/** Bars of a Code 128-looking barcode: widths from a fixed seed (decorative, not a scannable code). */
function barcode(seed: number, bars: number): string {
  const random = seededRandom(seed);
  let x = 0;
  const rects: string[] = [];
  for (let i = 0; i < bars; i++) {
    const width = 1 + Math.floor(random() * 3);
    const gap = 1 + Math.floor(random() * 3);
    rects.push(`<rect x="${x}" y="0" width="${width}" height="60"/>`);
    x += width + gap;
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${x} 60" preserveAspectRatio="none" width="100%" height="100%">${rects.join('')}</svg>`;
}

function shippingLabel(): FidelityCase {
  const css = `
    @page { size: 4in 6in; margin: 0; }
    body { margin: 0; font-family: sans-serif; color: #000; }
    .label { box-sizing: border-box; width: 4in; height: 6in; border: 2px solid #000; display: grid; grid-template-rows: auto auto 1fr auto auto; }
    .row { border-bottom: 2px solid #000; padding: 2mm 3mm; }
    .from { font-size: 7.5pt; line-height: 1.3; display: flex; justify-content: space-between; }
    .service { display: flex; justify-content: space-between; align-items: center; }
    .service .big { font-size: 34pt; font-weight: 900; line-height: 1; }
    .service .name { font-size: 12pt; font-weight: 800; text-align: right; }
    .to { font-size: 13pt; line-height: 1.3; }
    .to .label-title { font-size: 7pt; font-weight: bold; letter-spacing: .1em; }
    .to .postcode { font-size: 26pt; font-weight: 900; letter-spacing: .05em; }
    .barcode { height: 24mm; padding: 0 6mm; }
    .tracking { text-align: center; font: bold 11pt monospace; letter-spacing: .15em; padding-bottom: 2mm; }
    .foot { display: flex; justify-content: space-between; font-size: 7pt; border-bottom: none; }
  `;
  const body = `
    <div class="label">
      <div class="row from"><div><b>FROM:</b> Bean &amp; Bramble Ltd<br>Unit 7, Kernick Industrial Estate<br>Penryn TR10 9EP, GB</div><div style="text-align:right">Weight: 4.2 kg<br>Parcel 1 of 2<br>Ship date: 30 SEP 2024</div></div>
      <div class="row service"><div class="big">48</div><div class="name">TRACKED 48<br><span style="font-size:8pt;font-weight:normal">Signature required</span></div></div>
      <div class="row to"><div class="label-title">SHIP TO:</div>The Harbour Kitchen<br>Attn: Lowenna Bray<br>2 Quay Street<br>FALMOUTH<div class="postcode">TR11 3HH</div></div>
      <div class="row"><div class="barcode">${barcode(7301, 48)}</div><div class="tracking">JD 0001 4472 9183 GB</div></div>
      <div class="row foot"><span>Ref: 2024-09-0412</span><span>Route: PZ-07 / Sort 3B</span></div>
    </div>`;
  return {
    name: 'business-shipping-label-4x6',
    title: 'Parcel shipping label on a 4 × 6 inch page (@page size: 4in 6in, margin 0) with an SVG barcode',
    html: htmlDocument({ lang: 'en-GB', title: 'Shipping label JD000144729183GB', head: inlineStyle(css), body }),
  };
}

/**
 * The worked example's invoice (examples/invoice/) as a stored template rendered with its sample
 * data: line items, VAT, totals in German, and an EPC payment QR code drawn as SVG by the engine.
 */
function templateInvoice(): FidelityCase {
  const example = (file: string) => readFileSync(new URL(`../../../examples/invoice/${file}`, import.meta.url), 'utf8');
  return {
    name: 'template-invoice',
    title: 'A stored template (Liquid): the worked example’s invoice with an EPC payment QR code, rendered with its sample data',
    html: example('template.html'),
    options: JSON.parse(example('options.json')) as Record<string, unknown>,
    template: { data: JSON.parse(example('data.json')) as Record<string, unknown> },
  };
}

export function businessCases(): FidelityCase[] {
  return [letter(), longInvoice(), resume(), receipt(), shippingLabel(), templateInvoice()];
}
