/**
 * Pages styled by CSS frameworks: an invoice and a product landing page with Bootstrap 5's
 * compiled style sheet (and its JavaScript bundle on the landing page), and a project status page
 * whose utility classes Tailwind CSS 4 compiles at build time, as a site's build step does: the
 * `compile` API with the package's own index.css, fed the class names found in the HTML.
 */
import { compile } from 'tailwindcss';
import { esc, htmlDocument, inlineStyle, money, packageRoot, packageScript, packageText } from './assets.ts';
import type { FidelityCase } from './types.ts';

function bootstrapInvoice(): FidelityCase {
  const lines = [
    ['UX audit of checkout flow', 'Heuristic review, 12 recorded sessions, findings report', 1, 4200],
    ['Design system tokens', 'Colour, type and spacing tokens; Figma library', 1, 3600],
    ['Front-end development', 'Checkout redesign, React components (hours)', 64, 125],
    ['Accessibility testing', 'WCAG 2.2 AA audit with screen readers (hours)', 18, 110],
    ['Performance tuning', 'Core Web Vitals fixes, image pipeline (hours)', 22, 125],
    ['Project management', 'Weekly status, planning (hours)', 12, 95],
  ] as const;
  const subtotal = lines.reduce((sum, [, , qty, price]) => sum + qty * price, 0);
  const discount = Math.round(subtotal * 0.05 * 100) / 100;
  const vat = Math.round((subtotal - discount) * 0.2 * 100) / 100;
  const total = subtotal - discount + vat;
  const rows = lines
    .map(
      ([item, description, qty, price], i) =>
        `<tr><td>${i + 1}</td><td><div class="fw-semibold">${esc(item)}</div><div class="small text-body-secondary">${esc(description)}</div></td><td class="text-end">${qty}</td><td class="text-end">${money(price, '£')}</td><td class="text-end">${money(qty * price, '£')}</td></tr>`,
    )
    .join('');
  const body = `
  <div class="container-fluid py-2">
    <div class="row align-items-start mb-3">
      <div class="col-7">
        <div class="d-flex align-items-center gap-2 mb-2"><span class="badge text-bg-primary fs-5">B</span><span class="fs-4 fw-bold">Brightwater Studio</span></div>
        <address class="small mb-0">Unit 4, Canal Wharf<br>Leeds LS11 5PS<br>United Kingdom<br>VAT GB 318 4472 06</address>
      </div>
      <div class="col-5 text-end">
        <h1 class="display-6 fw-bold text-primary mb-1">Invoice</h1>
        <div class="small"><strong>No.</strong> BW-2024-0193</div>
        <div class="small"><strong>Issued</strong> 30 April 2024</div>
        <div class="small"><strong>Due</strong> 30 May 2024</div>
        <span class="badge rounded-pill text-bg-warning mt-2">Payment due</span>
      </div>
    </div>
    <div class="row g-3 mb-3">
      <div class="col-6"><div class="card h-100"><div class="card-header small text-uppercase fw-semibold">Bill to</div><div class="card-body small">
        <strong>Fenwick &amp; Daughters Ltd</strong><br>Accounts Payable<br>22 Grey Street<br>Newcastle upon Tyne NE1 6AE<br>PO reference: FD-88412</div></div></div>
      <div class="col-6"><div class="card h-100"><div class="card-header small text-uppercase fw-semibold">Project</div><div class="card-body small">
        Checkout redesign, phase 2<br>Work period: 1–30 April 2024<br>Contact: Hannah Okoro<br>hannah.okoro@brightwater.example</div></div></div>
    </div>
    <table class="table table-sm table-striped align-middle">
      <thead class="table-dark"><tr><th>#</th><th>Item</th><th class="text-end">Qty</th><th class="text-end">Unit price</th><th class="text-end">Amount</th></tr></thead>
      <tbody>${rows}</tbody>
    </table>
    <div class="row justify-content-end">
      <div class="col-5">
        <ul class="list-group list-group-flush small">
          <li class="list-group-item d-flex justify-content-between"><span>Subtotal</span><span>${money(subtotal, '£')}</span></li>
          <li class="list-group-item d-flex justify-content-between text-success"><span>Loyalty discount (5%)</span><span>${money(-discount, '£')}</span></li>
          <li class="list-group-item d-flex justify-content-between"><span>VAT (20%)</span><span>${money(vat, '£')}</span></li>
          <li class="list-group-item d-flex justify-content-between fw-bold fs-5"><span>Total due</span><span>${money(total, '£')}</span></li>
        </ul>
      </div>
    </div>
    <div class="alert alert-info small mt-3 mb-2" role="alert">
      <strong>How to pay:</strong> bank transfer to Brightwater Studio Ltd, sort code 40-22-19, account 71830945, quoting BW-2024-0193.
      Late payments may incur interest at 8% above the Bank of England base rate under the Late Payment of Commercial Debts Act.
    </div>
    <p class="text-center text-body-secondary small mt-2 mb-0">Thank you for your business.</p>
  </div>`;
  return {
    name: 'bootstrap-invoice',
    title: 'Invoice laid out with Bootstrap 5 (grid, cards, striped table, list group, badges, alert)',
    html: htmlDocument({
      lang: 'en-GB',
      title: 'Invoice BW-2024-0193 — Brightwater Studio',
      head: inlineStyle(packageText('bootstrap', 'dist/css/bootstrap.min.css')) + inlineStyle('@page { size: A4; margin: 12mm; } html { font-size: 14px; }'),
      body,
    }),
  };
}

function bootstrapLanding(): FidelityCase {
  const icon = (path: string) =>
    `<svg xmlns="http://www.w3.org/2000/svg" width="28" height="28" fill="currentColor" viewBox="0 0 16 16" aria-hidden="true"><path d="${path}"/></svg>`;
  const features = [
    ['Offline first', 'Forms save on the device and sync when the signal returns, so inspections never stall on a rooftop.', 'M8 1a7 7 0 1 0 0 14A7 7 0 0 0 8 1zm0 2a5 5 0 1 1 0 10A5 5 0 0 1 8 3z'],
    ['Photo evidence', 'Attach annotated photos to any checklist item; they are stamped with time and location.', 'M2 4h3l1-2h4l1 2h3v9H2V4zm6 2a3 3 0 1 0 0 6 3 3 0 0 0 0-6z'],
    ['Reports in one tap', 'Branded PDF reports go to the client the moment the inspection is signed off.', 'M3 1h7l3 3v11H3V1zm6 0v4h4'],
  ];
  const plans = [
    ['Starter', '£19', 'per inspector / month', ['Unlimited inspections', '5 checklist templates', 'Email support'], false],
    ['Team', '£39', 'per inspector / month', ['Everything in Starter', 'Unlimited templates', 'Scheduling and dispatch', 'Priority support'], true],
    ['Enterprise', 'Custom', 'annual contract', ['Everything in Team', 'Single sign-on', 'Data residency in the UK', 'Dedicated success manager'], false],
  ] as const;
  const body = `
  <nav class="navbar navbar-expand bg-body-tertiary border-bottom">
    <div class="container"><a class="navbar-brand fw-bold" href="#top">SiteCheck</a>
      <ul class="navbar-nav ms-auto"><li class="nav-item"><a class="nav-link" href="#features">Features</a></li>
      <li class="nav-item"><a class="nav-link" href="#pricing">Pricing</a></li><li class="nav-item"><a class="nav-link" href="#faq">FAQ</a></li></ul>
      <a class="btn btn-primary btn-sm ms-3" href="#pricing">Start free trial</a></div>
  </nav>
  <header class="py-5 text-center bg-primary-subtle" id="top">
    <div class="container">
      <h1 class="display-4 fw-bold">Inspections without the clipboard</h1>
      <p class="lead col-lg-8 mx-auto">SiteCheck turns paper checklists into mobile forms your inspectors can complete anywhere — on scaffolding,
        in basements, or three hours from the nearest signal.</p>
      <div class="d-flex justify-content-center gap-2"><a class="btn btn-primary btn-lg" href="#pricing">Try it free for 30 days</a>
        <a class="btn btn-outline-secondary btn-lg" href="#features">See how it works</a></div>
    </div>
  </header>
  <section class="container py-5" id="features"><div class="row g-4">
    ${features
      .map(
        ([title, text, path]) =>
          `<div class="col-4"><div class="text-primary mb-2">${icon(path!)}</div><h3 class="h5">${esc(title!)}</h3><p class="text-body-secondary">${esc(text!)}</p></div>`,
      )
      .join('')}
  </div></section>
  <section class="bg-body-tertiary py-5" id="pricing"><div class="container">
    <h2 class="text-center mb-4">Simple pricing</h2>
    <div class="row g-4">${plans
      .map(
        ([name, price, unit, items, featured]) => `<div class="col-4"><div class="card h-100 ${featured ? 'border-primary shadow' : ''}">
        <div class="card-header text-center ${featured ? 'text-bg-primary' : ''}"><h3 class="h5 my-1">${name}</h3></div>
        <div class="card-body text-center"><div class="display-6 fw-bold">${price}</div><div class="small text-body-secondary mb-3">${unit}</div>
        <ul class="list-unstyled">${items.map((item) => `<li class="py-1">✓ ${esc(item)}</li>`).join('')}</ul></div>
        <div class="card-footer bg-transparent border-0 pb-3 text-center"><a href="#top" class="btn ${featured ? 'btn-primary' : 'btn-outline-primary'} w-100">Choose ${name}</a></div></div></div>`,
      )
      .join('')}</div>
  </div></section>
  <section class="container py-5" id="faq"><h2 class="mb-3">Frequently asked questions</h2>
    <div class="accordion" id="faqs">
      <div class="accordion-item"><h3 class="accordion-header"><button class="accordion-button" type="button" data-bs-toggle="collapse" data-bs-target="#q1">Can I import my existing checklists?</button></h3>
        <div id="q1" class="accordion-collapse collapse show" data-bs-parent="#faqs"><div class="accordion-body">Yes. Upload a spreadsheet or a PDF and our team will build the template for you within two working days, free on every plan.</div></div></div>
      <div class="accordion-item"><h3 class="accordion-header"><button class="accordion-button collapsed" type="button" data-bs-toggle="collapse" data-bs-target="#q2">Where is our data stored?</button></h3>
        <div id="q2" class="accordion-collapse collapse" data-bs-parent="#faqs"><div class="accordion-body">In data centres in London and Manchester.</div></div></div>
    </div>
  </section>
  <footer class="border-top py-4 small text-body-secondary"><div class="container d-flex justify-content-between"><span>© 2024 SiteCheck Ltd · Registered in England no. 12840391</span><span>hello@sitecheck.example</span></div></footer>`;
  return {
    name: 'bootstrap-landing',
    title: 'Product landing page with Bootstrap 5 (navbar, hero, pricing cards, accordion) and its JavaScript bundle',
    html: htmlDocument({
      lang: 'en-GB',
      title: 'SiteCheck — Inspections without the clipboard',
      head: inlineStyle(packageText('bootstrap', 'dist/css/bootstrap.min.css')),
      body: body + packageScript('bootstrap', 'dist/js/bootstrap.bundle.min.js'),
    }),
  };
}

/** Every class name used in the HTML: the candidates Tailwind's scanner would find in the source. */
function classCandidates(html: string): string[] {
  const candidates = new Set<string>();
  for (const match of html.matchAll(/class="([^"]*)"/g)) for (const name of match[1]!.split(/\s+/)) if (name) candidates.add(name);
  return [...candidates];
}

async function tailwindCss(html: string): Promise<string> {
  const root = packageRoot('tailwindcss');
  const compiler = await compile('@import "tailwindcss";\n@theme { --color-brand: oklch(55% 0.19 262); }\n', {
    base: root,
    loadStylesheet: async (id: string) => {
      if (id !== 'tailwindcss') throw new Error(`No stylesheet ${id}`);
      return { path: `${root}/index.css`, base: root, content: packageText('tailwindcss', 'index.css') };
    },
  });
  return compiler.build(classCandidates(html));
}

async function tailwindStatus(): Promise<FidelityCase> {
  const projects = [
    ['Mobile app 3.0', 'Priya Raman', 'PR', 'On track', 'bg-emerald-100 text-emerald-800', 78, 'bg-emerald-500'],
    ['Payments migration', 'Tomás Ruiz', 'TR', 'At risk', 'bg-amber-100 text-amber-800', 52, 'bg-amber-500'],
    ['Data warehouse', 'Jin Park', 'JP', 'On track', 'bg-emerald-100 text-emerald-800', 64, 'bg-emerald-500'],
    ['Help centre redesign', 'Olivia Brandt', 'OB', 'Blocked', 'bg-rose-100 text-rose-800', 31, 'bg-rose-500'],
    ['SOC 2 audit', 'Kwame Mensah', 'KM', 'Done', 'bg-sky-100 text-sky-800', 100, 'bg-sky-500'],
  ] as const;
  const milestones = [
    ['3 Jun', 'Beta of the mobile app to 2,000 customers', 'done'],
    ['17 Jun', 'Card payments moved to the new processor', 'late'],
    ['1 Jul', 'Warehouse replaces the nightly CSV exports', 'next'],
    ['15 Jul', 'Help centre search launched', 'blocked'],
  ] as const;
  const body = `
  <div class="mx-auto max-w-4xl px-6 py-4 text-slate-800">
    <header class="flex items-end justify-between border-b-4 border-brand pb-4">
      <div><p class="text-sm font-semibold tracking-widest text-brand uppercase">Product Engineering</p>
        <h1 class="text-3xl font-bold tracking-tight">Portfolio status — week 24</h1></div>
      <div class="text-right text-sm text-slate-500"><p>10–14 June 2024</p><p>Prepared for the leadership team</p></div>
    </header>
    <section class="mt-6 grid grid-cols-4 gap-4">
      <div class="rounded-xl bg-slate-50 p-4 ring-1 ring-slate-200"><p class="text-xs text-slate-500 uppercase">Projects</p><p class="text-2xl font-bold">5</p></div>
      <div class="rounded-xl bg-emerald-50 p-4 ring-1 ring-emerald-200"><p class="text-xs text-emerald-700 uppercase">On track</p><p class="text-2xl font-bold text-emerald-700">2</p></div>
      <div class="rounded-xl bg-amber-50 p-4 ring-1 ring-amber-200"><p class="text-xs text-amber-700 uppercase">At risk</p><p class="text-2xl font-bold text-amber-700">1</p></div>
      <div class="rounded-xl bg-rose-50 p-4 ring-1 ring-rose-200"><p class="text-xs text-rose-700 uppercase">Blocked</p><p class="text-2xl font-bold text-rose-700">1</p></div>
    </section>
    <section class="mt-8">
      <h2 class="mb-3 text-lg font-semibold">Projects</h2>
      <div class="divide-y divide-slate-200 overflow-hidden rounded-xl ring-1 ring-slate-200">
        ${projects
          .map(
            ([name, owner, initials, status, badge, progress, bar]) => `<div class="flex items-center gap-4 bg-white px-4 py-3">
          <div class="flex h-9 w-9 shrink-0 items-center justify-center rounded-full bg-brand text-sm font-semibold text-white">${initials}</div>
          <div class="min-w-0 flex-1"><p class="font-medium">${esc(name)}</p><p class="text-sm text-slate-500">${esc(owner)}</p></div>
          <div class="w-40"><div class="h-2 rounded-full bg-slate-100"><div class="h-2 rounded-full ${bar}" style="width:${progress}%"></div></div><p class="mt-1 text-right text-xs text-slate-500">${progress}%</p></div>
          <span class="rounded-full px-2.5 py-0.5 text-xs font-medium ${badge}">${status}</span></div>`,
          )
          .join('')}
      </div>
    </section>
    <section class="mt-8 grid grid-cols-2 gap-6">
      <div><h2 class="mb-3 text-lg font-semibold">Milestones</h2>
        <ol class="relative border-s border-slate-200">${milestones
          .map(
            ([date, text, state]) =>
              `<li class="ms-4 pb-4"><div class="absolute -start-1.5 mt-1.5 h-3 w-3 rounded-full ${state === 'done' ? 'bg-emerald-500' : state === 'late' ? 'bg-amber-500' : state === 'blocked' ? 'bg-rose-500' : 'bg-slate-300'}"></div><time class="text-xs font-semibold text-slate-500">${date}</time><p class="text-sm">${esc(text)}</p></li>`,
          )
          .join('')}</ol></div>
      <div><h2 class="mb-3 text-lg font-semibold">Decisions needed</h2>
        <ul class="space-y-3 text-sm">
          <li class="rounded-lg bg-amber-50 p-3 ring-1 ring-amber-200"><strong>Payments:</strong> accept a two-week slip, or run both processors in parallel through July at an extra cost of about £14,000.</li>
          <li class="rounded-lg bg-rose-50 p-3 ring-1 ring-rose-200"><strong>Help centre:</strong> the search vendor's contract is unsigned; legal review has been waiting since 29 May.</li>
          <li class="rounded-lg bg-slate-50 p-3 ring-1 ring-slate-200"><strong>Hiring:</strong> approve the second data engineer role so the warehouse can take on finance reporting in Q3.</li>
        </ul></div>
    </section>
    <footer class="mt-6 border-t border-slate-200 pt-3 text-xs text-slate-400">Generated from the portfolio tracker · Figures as of Friday 14 June 2024, 17:00 BST</footer>
  </div>`;
  const css = await tailwindCss(body);
  return {
    name: 'tailwind-status-report',
    title: 'Project status report styled with Tailwind CSS 4 utilities compiled at build time (compile API)',
    html: htmlDocument({
      lang: 'en-GB',
      title: 'Portfolio status — week 24',
      head: inlineStyle(css) + inlineStyle('@page { size: A4; margin: 10mm; }'),
      body,
    }),
  };
}

export async function frameworkCases(): Promise<FidelityCase[]> {
  return [bootstrapInvoice(), bootstrapLanding(), await tailwindStatus()];
}
