/**
 * Long documents in plain CSS (no pagination library): a 200-plus page book whose chapters start
 * on a new page (break-before) with page numbers in @page margin boxes, and tables that run over
 * many pages with repeated <thead> and <tfoot> and rows that must not split (break-inside: avoid).
 * All text and figures come from fixed seeds.
 */
import { esc, htmlDocument, inlineStyle, money, seededRandom } from './assets.ts';
import { paragraph } from './prose.ts';
import type { FidelityCase } from './types.ts';

const CHAPTER_TITLES = [
  'The Ferry', 'Low Water', 'The Letter', 'Market Day', 'The Lamp Room', 'A Stranger on the Quay', 'Michaelmas Rents',
  'Fog', 'The Surveyor’s Chain', 'Pilchards', 'The Custom House', 'Night Crossing', 'The Quarrel', 'Candlemas', 'Salt',
  'The Wreck of the Providence', 'Harbour Dues', 'The New Road', 'Spring Tides', 'The Inquest', 'Net Lofts',
  'The Mail Coach', 'A Wedding', 'The Toll-House', 'Gales', 'The Accounts', 'Lime', 'The Breakwater', 'Eliza’s Answer',
  'The Chapel Fire', 'Whitsun', 'The Schoolroom', 'A Debt Repaid', 'Harvest', 'The Lighthouse Dark', 'The Trial',
  'Ebb', 'Letters Home', 'The Last Crossing', 'Polwithen',
];

function longBook(): FidelityCase {
  const random = seededRandom(1871);
  const chapters = CHAPTER_TITLES.map((title, index) => {
    const paras = Array.from({ length: 21 }, () => `<p>${esc(paragraph(random, 5, 8))}</p>`).join('\n');
    return `<section class="chapter" id="ch${index + 1}"><h2><small>Chapter ${index + 1}</small>${esc(title)}</h2>\n${paras}</section>`;
  }).join('\n');
  const css = `
    @page { size: A4; margin: 22mm 24mm 24mm;
      @top-center { content: "The Tides of Polwithen"; font: italic 9pt serif; color: #666; }
      @bottom-center { content: counter(page); font: 9pt serif; } }
    @page :first { @top-center { content: none; } @bottom-center { content: none; } }
    body { font-family: serif; font-size: 11pt; line-height: 1.5; color: #111; margin: 0; }
    .title { text-align: center; padding-top: 70mm; }
    .title h1 { font-size: 30pt; font-weight: normal; margin: 0 0 8mm; }
    .title p { font-style: italic; font-size: 13pt; margin: 0; text-align: center; text-indent: 0; }
    nav { break-before: page; columns: 2; column-gap: 12mm; }
    nav h2 { column-span: all; }
    nav ol { margin: 0; padding-left: 1.6em; }
    .chapter { break-before: page; }
    h2 { font-weight: normal; font-size: 18pt; text-align: center; margin: 18mm 0 10mm; }
    h2 small { display: block; font-size: 9pt; letter-spacing: .2em; text-transform: uppercase; color: #666; margin-bottom: 3mm; }
    p { margin: 0; text-indent: 1.5em; text-align: justify; orphans: 2; widows: 2; }
    h2 + p { text-indent: 0; }
  `;
  const body = `
    <section class="title"><h1>The Tides of Polwithen</h1><p>A novel in forty chapters</p><p style="margin-top:40mm;font-style:normal;font-size:10pt">Second edition</p></section>
    <nav><h2>Contents</h2><ol>${CHAPTER_TITLES.map((title, i) => `<li><a href="#ch${i + 1}">${esc(title)}</a></li>`).join('')}</ol></nav>
    ${chapters}`;
  return {
    name: 'long-book',
    title: 'A 200-plus page novel in plain CSS: chapters with break-before: page, page numbers in @page margin boxes',
    html: htmlDocument({ lang: 'en-GB', title: 'The Tides of Polwithen', head: inlineStyle(css), body }),
  };
}

const ACCOUNTS = [
  ['4000', 'Sales — retail'], ['4010', 'Sales — wholesale'], ['4900', 'Other income'], ['5000', 'Cost of goods sold'],
  ['6100', 'Rent and rates'], ['6200', 'Utilities'], ['6300', 'Wages and salaries'], ['6400', 'Travel'],
  ['6500', 'Software subscriptions'], ['6600', 'Professional fees'], ['6700', 'Marketing'], ['6800', 'Bank charges'],
] as const;
const COUNTERPARTIES = [
  'Harbour Wholesale Ltd', 'Penrose Dairy', 'Atlantic Print Co.', 'South West Water', 'Kernow Energy', 'HMRC',
  'Tregenna Accountants', 'Cloudline Software', 'Mounts Bay Freight', 'Trelawny Estates', 'St Ives Bakery', 'Card settlement',
];

function ledgerTable(): FidelityCase {
  const random = seededRandom(20240331);
  let balance = 48_213.55;
  let debits = 0;
  let credits = 0;
  const rows: string[] = [];
  for (let i = 0; i < 640; i++) {
    const day = 1 + Math.floor((i / 640) * 365);
    const date = new Date(Date.UTC(2023, 3, 1) + day * 86_400_000).toISOString().slice(0, 10);
    const [code, account] = ACCOUNTS[Math.floor(random() * ACCOUNTS.length)]!;
    const party = COUNTERPARTIES[Math.floor(random() * COUNTERPARTIES.length)]!;
    const income = code.startsWith('4');
    const amount = Math.round((income ? 200 + random() * 4800 : 20 + random() * 2400) * 100) / 100;
    if (income) credits += amount;
    else debits += amount;
    balance += income ? amount : -amount;
    // Every few rows a long narrative, so that some rows take two or three lines and must not split.
    const memo =
      i % 7 === 3
        ? `${party}: invoice ${1000 + i}, part payment against the statement of account agreed on the telephone; the remainder is disputed pending a credit note for damaged stock`
        : `${party}: invoice ${1000 + i}`;
    rows.push(
      `<tr><td>${date}</td><td>JE-${String(i + 1).padStart(5, '0')}</td><td>${code}</td><td>${esc(account)}</td><td class="memo">${esc(memo)}</td>` +
        `<td class="num">${income ? '' : money(amount, '')}</td><td class="num">${income ? money(amount, '') : ''}</td><td class="num">${money(balance, '')}</td></tr>`,
    );
  }
  const css = `
    @page { size: A4; margin: 14mm 12mm 16mm;
      @bottom-right { content: "Page " counter(page) " of " counter(pages); font: 8pt sans-serif; color: #555; }
      @bottom-left { content: "Penwith Provisions Ltd — general ledger detail, FY 2023/24"; font: 8pt sans-serif; color: #555; } }
    body { font-family: sans-serif; font-size: 8pt; color: #111; margin: 0; }
    h1 { font-size: 14pt; margin: 0 0 2px; }
    .sub { color: #555; margin-bottom: 8px; font-size: 9pt; }
    table { width: 100%; border-collapse: collapse; }
    thead { display: table-header-group; } tfoot { display: table-footer-group; }
    th { background: #1e3a5f; color: #fff; text-align: left; padding: 4px; font-weight: 600; }
    td { padding: 3px 4px; border-bottom: 1px solid #d8dee6; vertical-align: top; }
    tbody tr:nth-child(even) td { background: #f4f6f9; }
    tr { break-inside: avoid; }
    .memo { width: 38%; }
    td:nth-child(-n+3) { white-space: nowrap; }
    .num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
    tfoot td { border-top: 2px solid #1e3a5f; border-bottom: none; color: #555; font-style: italic; background: #fff; }
    .totals td { font-weight: bold; border-top: 2px solid #111; background: #fff !important; }
  `;
  const body = `
    <h1>General Ledger Detail</h1>
    <div class="sub">Penwith Provisions Ltd · Financial year 1 April 2023 – 31 March 2024 · All amounts in GBP · Opening balance 48,213.55</div>
    <table>
      <thead><tr><th>Date</th><th>Entry</th><th>Acct</th><th>Account name</th><th>Description</th><th class="num">Debit</th><th class="num">Credit</th><th class="num">Balance</th></tr></thead>
      <tfoot><tr><td colspan="8">Continued on the next page unless this is the last page. Figures are unaudited.</td></tr></tfoot>
      <tbody>${rows.join('\n')}
        <tr class="totals"><td colspan="5">Totals for the year</td><td class="num">${money(debits, '')}</td><td class="num">${money(credits, '')}</td><td class="num">${money(balance, '')}</td></tr>
      </tbody>
    </table>`;
  return {
    name: 'table-ledger',
    title: 'General ledger of 640 entries over many pages: repeated thead and tfoot, rows with break-inside: avoid',
    html: htmlDocument({ lang: 'en-GB', title: 'General Ledger Detail FY 2023/24', head: inlineStyle(css), body }),
  };
}

function partsCatalogue(): FidelityCase {
  const random = seededRandom(77);
  const groups = [
    ['Fasteners', ['Hex bolt', 'Coach screw', 'Wing nut', 'Spring washer', 'Rivet', 'Threaded rod', 'Anchor bolt']],
    ['Hinges and brackets', ['Butt hinge', 'Tee hinge', 'Angle bracket', 'Shelf bracket', 'Joist hanger', 'Gate hinge']],
    ['Plumbing', ['Compression elbow', 'Push-fit tee', 'Isolating valve', 'Tank connector', 'Waste trap', 'Pipe clip']],
    ['Electrical', ['Junction box', 'Cable gland', 'Terminal strip', 'Back box', 'Cable tie', 'Conduit saddle']],
    ['Abrasives', ['Sanding disc', 'Flap wheel', 'Wire brush', 'Cutting disc', 'Sanding sheet']],
    ['Adhesives and sealants', ['Silicone sealant', 'Wood glue', 'Epoxy putty', 'Grab adhesive', 'Decorator’s caulk']],
    ['Safety', ['Safety glasses', 'Ear defenders', 'Dust mask FFP2', 'Nitrile gloves', 'Hi-vis vest']],
    ['Ladders and access', ['Step ladder', 'Extension ladder', 'Platform step', 'Trestle', 'Scaffold board']],
  ] as const;
  const finishes = ['zinc plated', 'stainless A2', 'black', 'brass', 'galvanised', 'bright'];
  const tbodies = groups
    .map(([group, items]) => {
      const rows = items.flatMap((item) =>
        [0, 1, 2].map((v) => {
          const size = ['M6', 'M8', 'M10', '50 mm', '75 mm', '100 mm', '15 mm', '22 mm'][Math.floor(random() * 8)]!;
          const finish = finishes[Math.floor(random() * finishes.length)]!;
          const price = 0.15 + random() * 40;
          const stock = Math.floor(random() * 2400);
          return `<tr><td>${group.slice(0, 3).toUpperCase()}-${String(1000 + Math.floor(random() * 9000))}</td><td>${esc(item)}${v ? ` (${v === 1 ? 'pack of 10' : 'pack of 50'})` : ''}</td><td>${size}</td><td>${finish}</td><td class="num">${money(price * (v === 0 ? 1 : v === 1 ? 9 : 40), '£')}</td><td class="num">${stock}</td><td>${stock < 100 ? '<span class="low">Low</span>' : 'In stock'}</td></tr>`;
        }),
      );
      return `<tbody><tr class="group"><th colspan="7">${esc(group)}</th></tr>${rows.join('')}</tbody>`;
    })
    .join('\n');
  const css = `
    @page { size: A4 landscape; margin: 12mm 14mm;
      @top-right { content: "Trade price list · Spring 2024"; font: 8pt sans-serif; color: #666; }
      @bottom-center { content: counter(page) " / " counter(pages); font: 8pt sans-serif; } }
    body { font-family: sans-serif; font-size: 9pt; margin: 0; color: #1c1917; }
    h1 { font-size: 16pt; margin: 0; color: #9a3412; }
    p.lead { margin: 2px 0 10px; color: #57534e; }
    table { width: 100%; border-collapse: collapse; }
    thead th { background: #9a3412; color: #fff; padding: 5px; text-align: left; }
    td { padding: 3px 5px; border-bottom: 1px solid #e7e5e4; }
    tbody { break-inside: avoid; }
    tr.group th { text-align: left; background: #ffedd5; color: #7c2d12; padding: 5px; font-size: 10pt; }
    .num { text-align: right; font-variant-numeric: tabular-nums; }
    .low { color: #b91c1c; font-weight: bold; }
  `;
  const body = `
    <h1>Polwithen Trade Supplies — Trade Price List</h1>
    <p class="lead">Prices exclude VAT and are valid from 1 March 2024 until further notice. Stock levels as at 29 February 2024.</p>
    <table><thead><tr><th>Code</th><th>Description</th><th>Size</th><th>Finish</th><th class="num">Price</th><th class="num">Stock</th><th>Status</th></tr></thead>
    ${tbodies}</table>`;
  return {
    name: 'table-price-list',
    title: 'Trade price list on A4 landscape: one tbody per product group kept whole (break-inside: avoid), repeated thead',
    html: htmlDocument({ lang: 'en-GB', title: 'Trade Price List — Spring 2024', head: inlineStyle(css), body }),
  };
}

export function longCases(): FidelityCase[] {
  return [longBook(), ledgerTable(), partsCatalogue()];
}
