/**
 * Documents paginated by Paged.js (the pagedjs polyfill, which lays the pages out asynchronously
 * after load): an annotated novel on A5 with running headers (string-set), page counters in margin
 * boxes, named pages for the cover, front matter and chapters, and footnotes (float: footnote);
 * and a shorter annual report whose table of contents takes its page numbers from target-counter.
 */
import { esc, htmlDocument, inlineStyle, packageScript, seededRandom } from './assets.ts';
import { paragraph } from './prose.ts';
import type { FidelityCase } from './types.ts';

/** Notes an editor would add for a modern reader: a sentence of the text and the footnote it carries. */
const NOTES: readonly (readonly [string, string])[] = [
  ['The rents fell due at Michaelmas, and the whole street knew who had not paid.', 'The feast of St Michael and All Angels, 29 September: one of the English quarter days, on which rents and debts fell due.'],
  ['The pilchards came late that year, and the cellars stood empty until September.', 'Shoals of pilchards arrived off the Cornish coast in late summer; they were pressed and cured in salt in the fish cellars and exported to Italy and Spain.'],
  ['Smoke drifted over the water from the lime kiln on the far bank.', 'Limestone brought in by boat was burned in coastal kilns to make quicklime, which farmers spread on acid fields.'],
  ['The carrier paid his penny at the toll-house and went on up the hill.', 'Turnpike trusts built toll-houses where travellers paid to use the improved roads; many had angled fronts so that the keeper could watch the road both ways.'],
  ['Up in the net lofts the women sat mending by the last of the light.', 'The upper floors of the fish cellars, where nets were hung, dried and mended out of the weather.'],
  ['He bought lamp oil and a coil of rope at the chandler’s before the shop closed.', 'A ship’s chandler sold rope, canvas, tar, lamp oil and provisions to the crews of visiting vessels.'],
  ['The mail coach was an hour late, and the letters with it.', 'Mail coaches carried the post between towns to a fixed timetable from 1784 until the railways replaced them.'],
  ['Two men from the custom house walked the cliff path every night that month.', 'The custom house collected duty on imported goods; the smuggling of brandy, gin and tea was common on this coast until the mid-nineteenth century.'],
  ['The surveyor laid out his chain across the churchyard wall.', 'Gunter’s chain, 66 feet long and divided into 100 links, was the standard measure of English land surveyors; ten square chains make an acre.'],
  ['By Candlemas the worst of the winter was over.', 'The feast of the Purification, 2 February, when candles were blessed; it was also a Scottish term day.'],
  ['The harbour dues were entered in the ledger in shillings and pence.', 'Before decimalisation in 1971 a pound was divided into 20 shillings of 12 pence each.'],
  ['The lugger lay over on her side in the mud until the tide came back.', 'A lugger is a small sailing vessel with lugsails, the usual fishing boat of the Cornish ports.'],
];

const CHAPTERS = [
  'The Ferry at Polwithen',
  'A Letter from London',
  'The Surveyor',
  'Pilchard Season',
  'The Dark Lighthouse',
  'Candlemas',
];

function pagedBook(): FidelityCase {
  const random = seededRandom(1847);
  let note = 0;
  const chapters = CHAPTERS.map((title, index) => {
    const paras: string[] = [];
    for (let p = 0; p < 9; p++) {
      let text = esc(paragraph(random, 4, 7));
      if (p % 3 === 1) {
        const [sentence, footnote] = NOTES[note % NOTES.length]!;
        note++;
        text += ` ${esc(sentence.slice(0, -1))}<span class="footnote">${esc(footnote)}</span>.`;
      }
      paras.push(`<p>${text}</p>`);
    }
    return `<section class="chapter" id="chapter-${index + 1}"><h2><span class="number">Chapter ${index + 1}</span><span class="title">${esc(title)}</span></h2>${paras.join('\n')}</section>`;
  }).join('\n');
  const css = `
    @page { size: A5; margin: 20mm 16mm 22mm 18mm;
      @footnote { border-top: 0.5pt solid #777; padding-top: 2mm; margin-top: 4mm; } }
    @page :left { margin-left: 16mm; margin-right: 18mm;
      @top-left { content: string(booktitle); font-style: italic; font-size: 8.5pt; color: #555; }
      @bottom-left { content: counter(page); font-size: 9pt; } }
    @page :right {
      @top-right { content: string(chapter); font-style: italic; font-size: 8.5pt; color: #555; }
      @bottom-right { content: counter(page); font-size: 9pt; } }
    @page cover { margin: 0; @top-left { content: none; } @top-right { content: none; } @bottom-left { content: none; } @bottom-right { content: none; } }
    @page front { @top-left { content: none; } @top-right { content: none; } @bottom-left { content: none; } @bottom-right { content: none; }
      @bottom-center { content: counter(page, lower-roman); font-size: 9pt; } }
    @page chapter:first { @top-left { content: none; } @top-right { content: none; } @bottom-left { content: none; } @bottom-right { content: none; }
      @bottom-center { content: counter(page) " / " counter(pages); font-size: 8pt; color: #777; } }
    @page :blank { @top-left { content: none; } @top-right { content: none; } @bottom-left { content: none; } @bottom-right { content: none; } }
    html { font-family: serif; font-size: 10pt; line-height: 1.45; color: #1a1a1a; hyphens: auto; }
    .cover { page: cover; height: 210mm; display: flex; flex-direction: column; justify-content: center; align-items: center;
      background: #1f3b4d; color: #f3efe6; text-align: center; }
    .cover h1 { string-set: booktitle content(text); font-size: 28pt; letter-spacing: .04em; margin: 0 0 6mm; font-weight: normal; }
    .cover .author { font-size: 13pt; font-style: italic; }
    .cover .edition { margin-top: 30mm; font-size: 9pt; letter-spacing: .2em; text-transform: uppercase; }
    .front { page: front; break-before: page; }
    .front h2 { font-size: 14pt; font-weight: normal; text-align: center; margin: 10mm 0 8mm; }
    .front ol { list-style: none; padding: 0; }
    .front li a { color: inherit; text-decoration: none; display: flex; }
    .front li a::after { content: target-counter(attr(href), page); margin-left: auto; }
    .front li { margin: 2mm 0; }
    .chapter { page: chapter; break-before: right; counter-increment: chapter; }
    .chapter h2 { margin: 18mm 0 10mm; font-weight: normal; text-align: center; }
    .chapter h2 .number { display: block; font-size: 9pt; letter-spacing: .25em; text-transform: uppercase; color: #777; margin-bottom: 3mm; }
    .chapter h2 .title { display: block; font-size: 17pt; string-set: chapter content(text); }
    p { margin: 0; text-indent: 1.2em; text-align: justify; orphans: 2; widows: 2; }
    h2 + p { text-indent: 0; }
    h2 + p::first-letter { font-size: 2.6em; float: left; line-height: 1; margin: 0.05em 0.08em 0 0; }
    .footnote { float: footnote; font-size: 8pt; line-height: 1.3; text-indent: 0; text-align: left; }
    ::footnote-call { content: counter(footnote, decimal); font-size: 0.7em; vertical-align: super; line-height: 0; }
    ::footnote-marker { content: counter(footnote, decimal) ". "; }
  `;
  const body = `
    <section class="cover"><h1>The Salt Road</h1><div class="author">Hester Vane</div><div class="edition">Annotated edition</div></section>
    <section class="front"><h2>Contents</h2><ol>${CHAPTERS.map((title, i) => `<li><a href="#chapter-${i + 1}">${i + 1}. ${esc(title)}</a></li>`).join('')}</ol></section>
    <section class="front"><h2>A Note on the Text</h2>
      <p>This edition follows the first printing of 1871, with the author’s corrections from the copy she kept at Polwithen.
      Spelling has been left as she wrote it. The footnotes explain customs, trades and terms that were familiar to her
      first readers but are not to ours; they are the editor’s, not the author’s.</p>
      <p>The town of Polwithen is imaginary, though readers have placed it, with more confidence than evidence, on either
      side of the Fal. Its ferry, its lighthouse and its quarrels are drawn from many harbours along that coast.</p></section>
    ${chapters}`;
  return {
    name: 'pagedjs-annotated-novel',
    title: 'Annotated novel paginated by Paged.js: A5, running headers (string-set), counter(page)/counter(pages), named pages, footnotes',
    html: htmlDocument({
      lang: 'en-GB',
      title: 'The Salt Road — Annotated edition',
      head: inlineStyle(css) + packageScript('pagedjs', 'dist/paged.polyfill.js'),
      body,
    }),
    // Paged.js lays the 28 pages out in about 1.5 s after load here (the layout is still partial at 0.3 s).
    settleMs: 5000,
  };
}

function pagedReport(): FidelityCase {
  const sections = [
    ['chair', 'Chair’s statement'],
    ['year', 'The year in numbers'],
    ['projects', 'Projects'],
    ['finance', 'Financial summary'],
    ['governance', 'Governance'],
  ] as const;
  const css = `
    @page { size: A4; margin: 22mm 20mm 24mm;
      @top-left { content: "Kestrel Community Energy — Annual Report 2023"; font-size: 8pt; color: #4b5563; }
      @top-right { content: string(section); font-size: 8pt; color: #4b5563; }
      @bottom-center { content: "Page " counter(page) " of " counter(pages); font-size: 8pt; color: #4b5563; } }
    @page :first { @top-left { content: none; } @top-right { content: none; } @bottom-center { content: none; } }
    html { font-family: sans-serif; font-size: 10pt; line-height: 1.5; color: #111827; }
    .title-page { height: 230mm; display: flex; flex-direction: column; justify-content: flex-end; border-left: 8mm solid #16a34a; padding-left: 10mm; }
    .title-page h1 { font-size: 30pt; margin: 0; line-height: 1.1; }
    .title-page .sub { font-size: 13pt; color: #4b5563; margin-top: 4mm; }
    nav { break-before: page; }
    nav h2 { font-size: 16pt; }
    nav ol { list-style: none; padding: 0; }
    nav li { border-bottom: 1px dotted #9ca3af; margin: 3mm 0; }
    nav a { display: flex; color: inherit; text-decoration: none; }
    nav a::after { content: target-counter(attr(href), page); margin-left: auto; }
    section.part { break-before: page; }
    section.part h3 { font-size: 11pt; margin: 5mm 0 1mm; break-after: avoid; }
    section.part h2 { string-set: section content(text); font-size: 16pt; color: #166534; border-bottom: 2px solid #16a34a; padding-bottom: 2mm; }
    table { border-collapse: collapse; width: 100%; margin: 4mm 0; }
    th, td { border-bottom: 1px solid #d1d5db; padding: 2mm 3mm; text-align: right; }
    th:first-child, td:first-child { text-align: left; }
    thead th { background: #f0fdf4; }
    .figures { display: grid; grid-template-columns: repeat(3, 1fr); gap: 4mm; }
    .figures div { background: #f0fdf4; border-radius: 2mm; padding: 4mm; }
    .figures b { display: block; font-size: 18pt; color: #166534; }
  `;
  const body = `
    <section class="title-page"><h1>Annual Report<br>2023</h1><div class="sub">Kestrel Community Energy Co-operative Ltd<br>Registered society no. 7412 · Presented to members at the AGM, 18 May 2024</div></section>
    <nav><h2>Contents</h2><ol>${sections.map(([id, title]) => `<li><a href="#${id}">${esc(title)}</a></li>`).join('')}</ol></nav>
    <section class="part" id="chair"><h2>Chair’s statement</h2>
      <p>2023 was our best year for generation since the co-operative was founded. The three turbines at Carn Du and the
      rooftop arrays on eleven schools produced 9.4 GWh, enough for about 3,400 homes, and we paid members interest of
      4.0% on their shares for the sixth year running.</p>
      <p>The year was not without difficulty. A gearbox failure kept turbine 2 out of service for seven weeks in the spring,
      and the grid operator’s curtailment of output on windy days cost us an estimated 310 MWh. We thank our members for
      their patience and our volunteers for more than 2,100 hours of their time.</p>
      <p>Looking ahead, the board has agreed to seek planning consent for a fourth turbine and a 4 MWh battery at Carn Du.
      Both would be financed by a new share offer, which we expect to open to members first in the autumn of 2024.</p>
      <p>This is my last report as chair. It has been a privilege to serve a co-operative whose members have shown, year after
      year, that a community can own and run its own power station well.</p>
      <p style="text-align:right"><i>Margaret Pascoe</i>, Chair of the Board</p></section>
    <section class="part" id="year"><h2>The year in numbers</h2>
      <div class="figures"><div><b>9.4 GWh</b>generated</div><div><b>1,284</b>members</div><div><b>4.0%</b>interest paid</div>
      <div><b>3,900 t</b>CO₂ avoided</div><div><b>£112,000</b>to the community fund</div><div><b>11</b>school arrays</div></div>
      <table><thead><tr><th>Site</th><th>Capacity (kW)</th><th>Generation (MWh)</th><th>Availability</th></tr></thead><tbody>
        <tr><td>Carn Du turbine 1</td><td>2,300</td><td>3,412</td><td>97.8%</td></tr>
        <tr><td>Carn Du turbine 2</td><td>2,300</td><td>2,655</td><td>83.1%</td></tr>
        <tr><td>Carn Du turbine 3</td><td>2,300</td><td>3,298</td><td>96.9%</td></tr>
        <tr><td>School rooftop arrays (11)</td><td>486</td><td>402</td><td>99.2%</td></tr>
        <tr><td><b>Total</b></td><td><b>7,386</b></td><td><b>9,767</b></td><td></td></tr></tbody></table>
      <p>Generation figures are metered at the point of export. The total differs from the 9.4 GWh reported for the year
      because it includes 367 MWh used on site by the schools, which is billed to them under their power purchase agreements.</p>
      <p>Carbon savings are calculated with the government’s 2023 grid-average conversion factor of 0.207 kg CO₂e per kWh.
      The community fund figure is the amount committed in the year; £86,400 of it had been paid out by 31 December.</p></section>
    <section class="part" id="projects"><h2>Projects</h2>
      <h3>Turbine 2 gearbox replacement</h3>
      <p>The gearbox of turbine 2 failed on 3 April after the condition-monitoring system reported rising vibration in the
      intermediate shaft bearing. A replacement was craned in on 22 May, once the ground had dried enough for the crane
      pads. The cost of £214,000 was met by our insurers, less the £25,000 excess; lost generation was covered by our
      business-interruption policy after a fourteen-day waiting period.</p>
      <h3>Schools solar programme</h3>
      <p>Two more schools joined the programme in 2023: Trewidden Primary (42 kW) and St Erth Academy (68 kW). Each school
      buys the electricity its array produces at a fixed price of 11.5p per kWh for twenty years, about half of what it would
      pay its supplier. Pupils at all eleven schools can follow their array’s output on a classroom display.</p>
      <h3>Fourth turbine and battery</h3>
      <p>Surveys for the proposed fourth turbine began in June. The bird and bat surveys will run for a full year, as the
      planning authority requires; noise monitoring at the four nearest homes was completed in November. A pre-application
      meeting with the planning authority is booked for March 2024.</p>
      <h3>Community fund</h3>
      <p>The fund made 46 grants in 2023, from £250 for a village hall’s defibrillator cabinet to £18,000 towards the
      insulation of the Penwith Youth Centre. Applications are assessed by a panel of five members chosen by ballot at the AGM.</p></section>
    <section class="part" id="finance"><h2>Financial summary</h2>
      <table><thead><tr><th></th><th>2023 (£)</th><th>2022 (£)</th></tr></thead><tbody>
        <tr><td>Electricity sales</td><td>1,486,210</td><td>1,712,044</td></tr>
        <tr><td>Operating costs</td><td>(402,877)</td><td>(371,502)</td></tr>
        <tr><td>Depreciation</td><td>(498,000)</td><td>(498,000)</td></tr>
        <tr><td>Interest to members</td><td>(247,600)</td><td>(246,080)</td></tr>
        <tr><td>Community fund</td><td>(112,000)</td><td>(140,000)</td></tr>
        <tr><td><b>Surplus for the year</b></td><td><b>225,733</b></td><td><b>456,462</b></td></tr></tbody></table>
      <p>Income fell by 13.2% from 2022, when wholesale electricity prices were at their peak. About 70% of our output is now
      sold under a fixed-price agreement that runs until March 2026, which protects members’ interest payments from further
      falls in the market.</p>
      <p>The surplus has been transferred to the decommissioning reserve (£60,000) and the general reserve (£165,733). At the
      year end the co-operative held cash of £1.21 million and owed £2.6 million on its bank loan, which is repaid in equal
      instalments until 2031.</p>
      <p>The full accounts, audited by Hocking &amp; Rule LLP, are available to members on request and are filed with the
      Financial Conduct Authority.</p></section>
    <section class="part" id="governance"><h2>Governance</h2>
      <p>The board met eleven times in 2023. Attendance was 91%. Two directors retired by rotation at the 2023 AGM and were
      re-elected; one casual vacancy was filled by co-option in September and will be put to members at this AGM.</p>
      <p>Each member has one vote, however many shares they hold. Members may put questions to the board at the AGM or in writing
      to the secretary at least fourteen days beforehand. The board’s register of interests is published on the members’ pages.</p>
      <p>The audit and risk committee reviewed the risk register in February and August. The principal risks remain the price
      of electricity after 2026, the availability of the turbines as they age, and changes to the rules for connecting new
      generation to the grid.</p></section>`;
  return {
    name: 'pagedjs-annual-report',
    title: 'Annual report paginated by Paged.js: table of contents with target-counter, margin boxes with counter(pages)',
    html: htmlDocument({
      lang: 'en-GB',
      title: 'Kestrel Community Energy — Annual Report 2023',
      head: inlineStyle(css) + packageScript('pagedjs', 'dist/paged.polyfill.js'),
      body,
    }),
    // Paged.js is done with these 7 pages within 0.3 s of load here; the margin is for slower machines.
    settleMs: 4000,
  };
}

export function pagedCases(): FidelityCase[] {
  return [pagedBook(), pagedReport()];
}
