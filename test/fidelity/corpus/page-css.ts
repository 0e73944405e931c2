/**
 * Documents that set up their own pages with CSS, as Chromium supports natively: an A5 landscape
 * certificate, conference badges at 100 mm × 150 mm, and a policy whose pages carry all six top
 * and bottom margin boxes with counter(page) and counter(pages), a different first page and
 * mirrored left and right margins.
 */
import { esc, htmlDocument, inlineStyle } from './assets.ts';
import type { FidelityCase } from './types.ts';

function certificate(): FidelityCase {
  const css = `
    @page { size: A5 landscape; margin: 9mm;
      @bottom-right { content: "Certificate no. RYA-DS-24-0917 · page " counter(page); font: 7pt sans-serif; color: #64748b; }
      @bottom-left { content: "Verify at the training centre office"; font: 7pt sans-serif; color: #64748b; } }
    html, body { height: 100%; margin: 0; }
    body { font-family: serif; color: #0f2741; }
    .frame { box-sizing: border-box; height: 100%; border: 3px double #b08d3c; padding: 8mm 12mm; text-align: center; display: flex; flex-direction: column; justify-content: space-between;
      background: radial-gradient(circle at 50% 40%, #fffdf6 0, #f7efd9 100%); }
    .org { font: 600 9pt sans-serif; letter-spacing: .3em; text-transform: uppercase; color: #b08d3c; }
    h1 { font-size: 24pt; font-weight: normal; margin: 2mm 0 0; letter-spacing: .05em; }
    .name { font-size: 22pt; font-style: italic; border-bottom: 1px solid #b08d3c; display: inline-block; padding: 0 10mm 1mm; margin: 3mm 0; }
    .text { font-size: 10.5pt; line-height: 1.5; margin: 0 10mm; }
    .signatures { display: flex; justify-content: space-around; font: 8pt sans-serif; }
    .signatures div { border-top: 1px solid #0f2741; padding-top: 1mm; width: 55mm; }
    .seal { width: 22mm; height: 22mm; border-radius: 50%; background: #b08d3c; color: #fff; display: flex; align-items: center; justify-content: center;
      font: bold 7pt sans-serif; letter-spacing: .1em; margin: 0 auto; box-shadow: 0 0 0 2px #fff, 0 0 0 3px #b08d3c; }
  `;
  const body = `
    <div class="frame">
      <div><div class="org">Falmouth Sailing Academy</div><h1>Certificate of Competence</h1></div>
      <div><div class="text">This is to certify that</div><div class="name">Morwenna Jane Tregear</div>
        <div class="text">has completed the Day Skipper practical course of 5 days and 112 nautical miles aboard the yacht <i>Kittiwake</i>,
        including 4 night hours, and has shown the skills required to skipper a small yacht by day in familiar waters.</div></div>
      <div class="seal">FSA · 2024</div>
      <div class="signatures"><div>Principal · Capt. R. Angove</div><div>Falmouth, 21 September 2024</div><div>Instructor · L. Nankervis</div></div>
    </div>`;
  return {
    name: 'page-a5-landscape-certificate',
    title: 'Certificate on an A5 landscape page (@page size: A5 landscape) with @bottom-left and @bottom-right margin boxes',
    html: htmlDocument({ lang: 'en-GB', title: 'Certificate of Competence — Day Skipper', head: inlineStyle(css), body }),
  };
}

function badges(): FidelityCase {
  const people = [
    ['Aisha', 'Bello', 'Platform engineer', 'Monzo', 'Speaker', '#7c3aed'],
    ['Henrik', 'Lindqvist', 'Head of design systems', 'Spotify', 'Attendee', '#0891b2'],
    ['Mei', 'Tanaka', 'Staff engineer', 'Shopify', 'Workshop lead', '#db2777'],
  ] as const;
  const css = `
    @page { size: 100mm 150mm; margin: 8mm 7mm 12mm;
      @top-center { content: "FRONTEND SOUTH WEST · BRISTOL · 9–10 OCT 2024"; font: 600 6.5pt sans-serif; letter-spacing: .12em; color: #475569; }
      @bottom-right { content: "Badge " counter(page) " of " counter(pages); font: 6.5pt sans-serif; color: #94a3b8; }
      @bottom-left { content: "Wi-Fi: FESW24 / harbourside"; font: 6.5pt sans-serif; color: #94a3b8; } }
    body { margin: 0; font-family: sans-serif; color: #0f172a; }
    .badge { break-after: page; height: 128mm; display: flex; flex-direction: column; text-align: center; }
    .badge:last-child { break-after: auto; }
    .logo { font-weight: 800; font-size: 15pt; letter-spacing: -.02em; margin-top: 4mm; }
    .logo span { color: #f97316; }
    .first { font-size: 34pt; font-weight: 800; margin-top: 14mm; line-height: 1; }
    .last { font-size: 16pt; margin-top: 2mm; }
    .role { font-size: 10pt; color: #475569; margin-top: 6mm; }
    .company { font-size: 12pt; font-weight: 600; margin-top: 1mm; }
    .type { margin-top: auto; color: #fff; font-weight: 700; letter-spacing: .2em; text-transform: uppercase; padding: 4mm 0; font-size: 11pt; }
  `;
  const body = people
    .map(
      ([first, last, role, company, type, colour]) => `<section class="badge"><div class="logo">Frontend <span>South West</span></div>
      <div class="first">${esc(first)}</div><div class="last">${esc(last)}</div><div class="role">${esc(role)}</div><div class="company">${esc(company)}</div>
      <div class="type" style="background:${colour}">${esc(type)}</div></section>`,
    )
    .join('\n');
  return {
    name: 'page-custom-size-badges',
    title: 'Conference badges on 100 mm × 150 mm pages (@page size: 100mm 150mm) with @top-center and @bottom-right counter(page)',
    html: htmlDocument({ lang: 'en-GB', title: 'Frontend South West 2024 — badges', head: inlineStyle(css), body }),
  };
}

const RETENTION: readonly (readonly [string, string, string, string])[] = [
  ['Customer contracts and terms accepted', 'Legal', '6 years after the contract ends', 'Limitation Act 1980, s. 5'],
  ['Invoices, receipts and VAT records', 'Finance', '6 years from the end of the financial year', 'HMRC VAT Notice 700/21'],
  ['Payroll records and PAYE', 'People', '3 years from the end of the tax year', 'Income Tax (PAYE) Regulations 2003'],
  ['Employee personnel files', 'People', '6 years after employment ends', 'Limitation Act 1980'],
  ['Unsuccessful job applications', 'People', '6 months after the decision', 'Equality Act 2010 claim period'],
  ['Right-to-work checks', 'People', '2 years after employment ends', 'Immigration, Asylum and Nationality Act 2006'],
  ['Accident book entries', 'Facilities', '3 years from the date of the entry', 'RIDDOR 2013'],
  ['CCTV recordings', 'Facilities', '31 days unless needed for an investigation', 'Legitimate interests'],
  ['Customer support tickets', 'Support', '2 years after the ticket closes', 'Legitimate interests'],
  ['Marketing consent records', 'Marketing', 'As long as the consent is relied on, then 2 years', 'UK GDPR Art. 7(1)'],
  ['Website analytics (identifiable)', 'Marketing', '14 months', 'PECR consent'],
  ['Application logs with IP addresses', 'Engineering', '90 days', 'Security of processing, UK GDPR Art. 32'],
  ['Database backups', 'Engineering', '35 days, then overwritten', 'Business continuity'],
  ['Board minutes and resolutions', 'Company secretary', 'Permanently', 'Companies Act 2006, s. 248'],
  ['Share register', 'Company secretary', 'Permanently', 'Companies Act 2006, s. 113'],
  ['Insurance policies and claims', 'Finance', '6 years after expiry; employers’ liability 40 years', 'ELCI Regulations 1998'],
  ['Data subject access requests', 'Privacy', '2 years after the response', 'Accountability, UK GDPR Art. 5(2)'],
  ['Data breach register', 'Privacy', '6 years', 'UK GDPR Art. 33(5)'],
];

function policy(): FidelityCase {
  const css = `
    @page { size: A4; margin: 25mm 20mm 22mm;
      @top-left { content: "Tidewater Travel Ltd"; font: 8pt sans-serif; color: #475569; }
      @top-center { content: "Records Retention Policy"; font: 600 8pt sans-serif; }
      @top-right { content: "POL-014 v3.2"; font: 8pt sans-serif; color: #475569; }
      @bottom-left { content: "Internal · Approved 4 March 2024"; font: 8pt sans-serif; color: #475569; }
      @bottom-center { content: "Uncontrolled when printed"; font: italic 8pt sans-serif; color: #94a3b8; }
      @bottom-right { content: "Page " counter(page) " of " counter(pages); font: 8pt sans-serif; } }
    @page :first { margin-top: 40mm; @top-left { content: none; } @top-center { content: none; } @top-right { content: none; } }
    @page :left { margin-left: 24mm; margin-right: 16mm; }
    @page :right { margin-left: 16mm; margin-right: 24mm; }
    body { font-family: serif; font-size: 10.5pt; line-height: 1.5; color: #0f172a; margin: 0; counter-reset: section; }
    h1 { font-family: sans-serif; font-size: 22pt; margin: 0; }
    .meta { font-family: sans-serif; font-size: 9pt; color: #475569; margin: 2mm 0 8mm; }
    h2 { font-family: sans-serif; font-size: 12.5pt; margin: 7mm 0 2mm; counter-increment: section; break-after: avoid; }
    h2::before { content: counter(section) ". "; }
    table { width: 100%; border-collapse: collapse; font-size: 9pt; font-family: sans-serif; }
    th, td { border: 1px solid #cbd5e1; padding: 3px 5px; text-align: left; vertical-align: top; }
    thead th { background: #e2e8f0; }
    tr { break-inside: avoid; }
    ol.steps li { margin-bottom: 2mm; }
  `;
  const para = (text: string) => `<p>${esc(text)}</p>`;
  const body = `
    <h1>Records Retention Policy</h1>
    <div class="meta">Policy POL-014 · Version 3.2 · Owner: Data Protection Officer · Approved by the Board on 4 March 2024 · Next review March 2025</div>
    <h2>Purpose</h2>
    ${para('This policy sets how long Tidewater Travel keeps the records it creates and receives, and how it disposes of them when that time is up. Keeping records for too short a time can leave us unable to defend a claim or answer a regulator; keeping them too long breaches the storage-limitation principle of data protection law and increases the harm a breach could do.')}
    ${para('It applies to records in every form — paper, email, files in shared drives, data in our booking platform and its backups — held by employees, contractors and suppliers acting for us.')}
    <h2>Principles</h2>
    <ol class="steps">
      <li>Every record type has an owner, a retention period and a trigger that starts the period (for example, the end of a contract).</li>
      <li>Records are kept for the period in the schedule and no longer, unless a legal hold applies.</li>
      <li>At the end of the period a record is deleted, anonymised or, for paper, shredded on site by our approved contractor.</li>
      <li>Personal data is minimised while it is kept: identifiable fields are removed from reports and analytics as soon as they are not needed.</li>
    </ol>
    <h2>Legal holds</h2>
    ${para('When litigation, an investigation or a regulatory inquiry is reasonably anticipated, the General Counsel may place a legal hold on the records concerned. Records under hold must not be deleted or altered until the hold is lifted in writing, whatever the schedule says. The Data Protection Officer keeps a register of holds and reviews it every quarter.')}
    <h2>Retention schedule</h2>
    <table><thead><tr><th>Record type</th><th>Owner</th><th>Retention period</th><th>Basis</th></tr></thead>
    <tbody>${RETENTION.map(([type, owner, period, basis]) => `<tr><td>${esc(type)}</td><td>${esc(owner)}</td><td>${esc(period)}</td><td>${esc(basis)}</td></tr>`).join('')}</tbody></table>
    <h2>Disposal</h2>
    ${para('Electronic records are deleted by the automated jobs described in the engineering runbook RB-031, which run nightly and write a log of what they removed. Where automation is not possible, the record owner deletes the records by hand at the end of each quarter and confirms in the disposal log that they have done so.')}
    ${para('Backups are not restored to recover records that have passed their retention period. Because backups are overwritten after 35 days, a deleted record disappears from them within five weeks at most.')}
    <h2>Responsibilities</h2>
    ${para('The Data Protection Officer owns this policy, advises on retention periods and audits compliance once a year. Heads of department make sure the record types they own are listed in the schedule and that their teams follow it. Every employee must keep records only in the approved systems and must not make personal copies.')}
    <h2>Breaches of this policy</h2>
    ${para('Deleting records under a legal hold, or keeping personal data beyond its retention period without a reason recorded in the exceptions log, is a disciplinary matter. Suspected breaches should be reported to privacy@tidewater.example.')}
    <h2>Review</h2>
    ${para('This policy is reviewed every year, and sooner if the law or our systems change. Version 3.2 adds the retention periods for right-to-work checks and CCTV and shortens the period for identifiable analytics data from 26 to 14 months.')}`;
  return {
    name: 'page-margin-boxes-policy',
    title: 'Policy document with all six top and bottom @page margin boxes, counter(page)/counter(pages), :first and mirrored :left/:right pages',
    html: htmlDocument({ lang: 'en-GB', title: 'Records Retention Policy — POL-014', head: inlineStyle(css), body }),
  };
}

export function pageCssCases(): FidelityCase[] {
  return [certificate(), badges(), policy()];
}
