/**
 * Lecture notes whose formulas KaTeX typesets in the page (katex.render, with KaTeX's style sheet
 * and its woff2 fonts inlined as data: URLs), and a code review handout whose listings
 * highlight.js colours at build time, as a static site generator does, with its GitHub theme.
 */
import hljs from 'highlight.js/lib/common';
import { esc, htmlDocument, inlineScript, inlineStyle, packageDataUrl, packageScript, packageText } from './assets.ts';
import type { FidelityCase } from './types.ts';

/** KaTeX's style sheet with every font reference replaced by the woff2 file as a data: URL. */
function katexCss(): string {
  return packageText('katex', 'dist/katex.min.css').replace(
    /src:url\(fonts\/([\w-]+)\.woff2\) format\("woff2"\)(?:,url\([^)]*\) format\("[a-z]+"\))*/g,
    (_, font: string) => `src:url(${packageDataUrl('katex', `dist/fonts/${font}.woff2`, 'font/woff2')}) format("woff2")`,
  );
}

const tex = (source: string, display = false) =>
  display ? `<div class="tex display">${esc(source.trim())}</div>` : `<span class="tex">${esc(source.trim())}</span>`;

function katexNotes(): FidelityCase {
  const css = `
    @page { size: A4; margin: 20mm 22mm; }
    body { font-family: serif; font-size: 11pt; line-height: 1.55; color: #111; margin: 0; }
    header { border-bottom: 1px solid #444; margin-bottom: 14px; padding-bottom: 6px; }
    header h1 { font-size: 17pt; margin: 0; }
    header .course { font-variant: small-caps; letter-spacing: .05em; color: #444; }
    h2 { font-size: 13pt; margin: 20px 0 6px; }
    .display { margin: 10px 0; text-align: center; }
    .box { border: 1px solid #999; background: #f7f7f2; padding: 6px 12px; margin: 12px 0; break-inside: avoid; }
    .box b { font-family: sans-serif; font-size: 9.5pt; text-transform: uppercase; letter-spacing: .05em; }
    ol li { margin-bottom: 6px; }
  `;
  const body = `
    <header><div class="course">EE 2410 · Signals and Systems · Autumn term</div><h1>Lecture 7 — The Continuous-Time Fourier Transform</h1></header>
    <p>Last week we represented a periodic signal as a sum of harmonically related complex exponentials. We now let the
      period grow without bound: the lines of the spectrum move closer together and, in the limit, a sum over
      harmonics ${tex(String.raw`k\omega_0`)} becomes an integral over the continuous frequency variable ${tex(String.raw`\omega`)}.</p>
    <h2>7.1 Definition</h2>
    <p>For a signal ${tex('x(t)')} that is absolutely integrable, the Fourier transform and its inverse are</p>
    ${tex(String.raw`X(j\omega) = \int_{-\infty}^{\infty} x(t)\, e^{-j\omega t}\, dt, \qquad x(t) = \frac{1}{2\pi} \int_{-\infty}^{\infty} X(j\omega)\, e^{j\omega t}\, d\omega.`, true)}
    <p>A sufficient condition for convergence (the first Dirichlet condition) is ${tex(String.raw`\int_{-\infty}^{\infty} |x(t)|\,dt < \infty`)}.</p>
    <div class="box"><b>Example 7.1</b> — the one-sided exponential ${tex(String.raw`x(t) = e^{-at}u(t)`)}, ${tex('a > 0')}:
      ${tex(String.raw`X(j\omega) = \int_0^\infty e^{-at} e^{-j\omega t}\,dt = \left[ \frac{-e^{-(a+j\omega)t}}{a+j\omega} \right]_0^\infty = \frac{1}{a + j\omega},`, true)}
      so that ${tex(String.raw`|X(j\omega)| = 1/\sqrt{a^2+\omega^2}`)} and ${tex(String.raw`\angle X(j\omega) = -\tan^{-1}(\omega/a)`)}.</div>
    <h2>7.2 Properties</h2>
    <ol>
      <li>Linearity: ${tex(String.raw`a\,x(t) + b\,y(t) \;\longleftrightarrow\; a\,X(j\omega) + b\,Y(j\omega)`)}.</li>
      <li>Time shift: ${tex(String.raw`x(t - t_0) \;\longleftrightarrow\; e^{-j\omega t_0} X(j\omega)`)}.</li>
      <li>Differentiation: ${tex(String.raw`\dfrac{d x(t)}{dt} \;\longleftrightarrow\; j\omega\, X(j\omega)`)}.</li>
      <li>Convolution: ${tex(String.raw`(x * h)(t) = \int_{-\infty}^{\infty} x(\tau) h(t-\tau)\, d\tau \;\longleftrightarrow\; X(j\omega) H(j\omega)`)}.</li>
      <li>Parseval's relation: ${tex(String.raw`\displaystyle\int_{-\infty}^{\infty} |x(t)|^2\,dt = \frac{1}{2\pi}\int_{-\infty}^{\infty} |X(j\omega)|^2\,d\omega`)}.</li>
    </ol>
    <h2>7.3 The rectangular pulse and the sinc function</h2>
    <p>Let ${tex(String.raw`x(t) = 1`)} for ${tex(String.raw`|t| < T_1`)} and ${tex('0')} otherwise. Then</p>
    ${tex(String.raw`X(j\omega) = \int_{-T_1}^{T_1} e^{-j\omega t}\,dt = \frac{2\sin(\omega T_1)}{\omega} = 2T_1\,\operatorname{sinc}\!\left(\frac{\omega T_1}{\pi}\right).`, true)}
    <p>Narrowing the pulse widens its spectrum: the product of the time width and the bandwidth is constant. In matrix
      form, sampling ${tex('N')} points of the transform gives the DFT, ${tex(String.raw`\mathbf{X} = \mathbf{F}\mathbf{x}`)}, with</p>
    ${tex(String.raw`\mathbf{F} = \begin{pmatrix} 1 & 1 & 1 & \cdots & 1 \\ 1 & W & W^2 & \cdots & W^{N-1} \\ 1 & W^2 & W^4 & \cdots & W^{2(N-1)} \\ \vdots & \vdots & \vdots & \ddots & \vdots \\ 1 & W^{N-1} & W^{2(N-1)} & \cdots & W^{(N-1)^2} \end{pmatrix}, \quad W = e^{-2\pi j/N}.`, true)}
    <h2>7.4 Systems described by differential equations</h2>
    <p>For an LTI system with ${tex(String.raw`\sum_{k=0}^{N} a_k \frac{d^k y}{dt^k} = \sum_{k=0}^{M} b_k \frac{d^k x}{dt^k}`)}, the frequency response is the ratio of polynomials</p>
    ${tex(String.raw`H(j\omega) = \frac{Y(j\omega)}{X(j\omega)} = \frac{\sum_{k=0}^{M} b_k (j\omega)^k}{\sum_{k=0}^{N} a_k (j\omega)^k}.`, true)}
    <div class="box"><b>Exercise</b> — show that the Gaussian ${tex(String.raw`x(t) = e^{-t^2/2\sigma^2}`)} is its own transform up to scale:
      ${tex(String.raw`X(j\omega) = \sigma\sqrt{2\pi}\; e^{-\sigma^2\omega^2/2}`)}. (Hint: complete the square in the exponent.)</div>`;
  const script = `
    for (const el of document.querySelectorAll('.tex')) {
      katex.render(el.textContent, el, { displayMode: el.classList.contains('display'), throwOnError: false });
    }
  `;
  return {
    name: 'katex-lecture-notes',
    title: 'Lecture notes with formulas typeset in the page by katex.render (KaTeX CSS and woff2 fonts inlined)',
    html: htmlDocument({
      lang: 'en-GB',
      title: 'Lecture 7 — The Continuous-Time Fourier Transform',
      head: inlineStyle(katexCss()) + inlineStyle(css) + packageScript('katex', 'dist/katex.min.js'),
      body: body + inlineScript(script),
    }),
  };
}

const LISTINGS: readonly { readonly file: string; readonly language: string; readonly note: string; readonly code: string }[] = [
  {
    file: 'src/billing/proration.ts',
    language: 'typescript',
    note: 'Proration now rounds per line item instead of on the total, so invoices add up to the cent.',
    code: String.raw`import { Money, type Currency } from '../money.ts';

export interface PlanChange {
  readonly from: { readonly monthlyPrice: Money };
  readonly to: { readonly monthlyPrice: Money };
  /** Days left in the billing period when the change takes effect. */
  readonly daysRemaining: number;
  readonly daysInPeriod: number;
}

/** The amount to charge (positive) or credit (negative) for a mid-period plan change. */
export function prorate(change: PlanChange, currency: Currency): Money {
  if (change.daysRemaining < 0 || change.daysRemaining > change.daysInPeriod) {
    throw new RangeError(` + "`daysRemaining must be within 0..${change.daysInPeriod}`" + String.raw`);
  }
  const share = change.daysRemaining / change.daysInPeriod;
  const credit = change.from.monthlyPrice.multiply(share).round(currency.minorUnits);
  const charge = change.to.monthlyPrice.multiply(share).round(currency.minorUnits);
  return charge.subtract(credit);
}`,
  },
  {
    file: 'scripts/reconcile.py',
    language: 'python',
    note: 'The nightly reconciliation reads the ledger in chunks and reports mismatches as CSV.',
    code: String.raw`#!/usr/bin/env python3
"""Compare invoice totals in the ledger with captured payments."""
import csv
import sys
from decimal import Decimal

CHUNK = 5_000

def mismatches(ledger, payments):
    captured = {p["invoice_id"]: Decimal(p["amount"]) for p in payments}
    for row in ledger:
        paid = captured.get(row["invoice_id"], Decimal("0"))
        if paid != Decimal(row["total"]):
            yield row["invoice_id"], row["total"], paid

if __name__ == "__main__":
    with open(sys.argv[1]) as ledger, open(sys.argv[2]) as payments:
        writer = csv.writer(sys.stdout)
        writer.writerow(["invoice_id", "expected", "captured"])
        for mismatch in mismatches(csv.DictReader(ledger), csv.DictReader(payments)):
            writer.writerow(mismatch)`,
  },
  {
    file: 'migrations/0042_invoice_lines.sql',
    language: 'sql',
    note: 'Line items get their own rounding column; the view keeps old reports working.',
    code: String.raw`BEGIN;

ALTER TABLE invoice_lines
  ADD COLUMN rounded_amount NUMERIC(12, 2) NOT NULL DEFAULT 0;

UPDATE invoice_lines
   SET rounded_amount = ROUND(quantity * unit_price, 2)
 WHERE created_at >= DATE '2024-01-01';

CREATE OR REPLACE VIEW invoice_totals AS
SELECT i.id, i.customer_id, SUM(l.rounded_amount) AS total
  FROM invoices i
  JOIN invoice_lines l ON l.invoice_id = i.id
 GROUP BY i.id, i.customer_id;

COMMIT;`,
  },
  {
    file: 'deploy/rollout.sh',
    language: 'bash',
    note: 'Canary first; the script stops if the error rate of the canary exceeds 1%.',
    code: String.raw`#!/usr/bin/env bash
set -euo pipefail

VERSION="$1"
kubectl set image deployment/billing-canary billing="registry.internal/billing:$VERSION"
kubectl rollout status deployment/billing-canary --timeout=5m

for attempt in $(seq 1 10); do
  rate=$(curl -s "$METRICS/api/v1/query?query=billing_error_rate" | jq -r '.data.result[0].value[1]')
  if (( $(echo "$rate > 0.01" | bc -l) )); then
    echo "Canary error rate $rate too high, rolling back" >&2
    kubectl rollout undo deployment/billing-canary
    exit 1
  fi
  sleep 30
done
kubectl set image deployment/billing billing="registry.internal/billing:$VERSION"`,
  },
];

function highlightListing(): FidelityCase {
  const css = `
    @page { size: A4; margin: 15mm; }
    body { font-family: sans-serif; font-size: 10pt; color: #24292f; margin: 0; line-height: 1.45; }
    h1 { font-size: 16pt; margin: 0; }
    .meta { color: #57606a; font-size: 9pt; margin: 2px 0 12px; }
    .file { border: 1px solid #d0d7de; border-radius: 6px; margin: 0 0 14px; break-inside: avoid; }
    .file header { background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 5px 10px; font-family: monospace; font-size: 9pt; display: flex; justify-content: space-between; }
    .file p { margin: 6px 10px; font-size: 9.5pt; }
    pre { margin: 0; padding: 8px 10px; font-size: 8.4pt; line-height: 1.4; counter-reset: line; white-space: pre-wrap; }
    pre code.hljs { padding: 0; font-family: monospace; }
    .line::before { counter-increment: line; content: counter(line); display: inline-block; width: 2.2em; margin-right: 10px; text-align: right; color: #8c959f; }
  `;
  const files = LISTINGS.map(({ file, language, note, code }) => {
    const highlighted = hljs.highlight(code, { language }).value;
    // Numbered lines: the highlighted HTML split at line ends (highlight.js closes no span across lines for these languages).
    const lines = highlighted
      .split('\n')
      .map((line) => `<span class="line">${line}</span>`)
      .join('\n');
    return `<section class="file"><header><span>${esc(file)}</span><span>${esc(language)}</span></header><p>${esc(note)}</p><pre><code class="hljs language-${language}">${lines}</code></pre></section>`;
  }).join('\n');
  const body = `
    <h1>Code review: billing service, change set #1187</h1>
    <div class="meta">Author: R. Haddad · Reviewers: K. Lindqvist, P. Oduya · Branch <code>fix/line-rounding</code> · 14 May 2024</div>
    ${files}`;
  return {
    name: 'highlightjs-code-review',
    title: 'Code review handout: TypeScript, Python, SQL and Bash listings coloured by highlight.js (GitHub theme)',
    html: htmlDocument({
      title: 'Code review: billing service, change set #1187',
      head: inlineStyle(packageText('highlight.js', 'styles/github.min.css')) + inlineStyle(css),
      body,
    }),
  };
}

export function mathCodeCases(): FidelityCase[] {
  return [katexNotes(), highlightListing()];
}
