/**
 * Diagram documents drawn by mermaid in the page: a process specification with a flowchart, and
 * an API integration guide with a sequence diagram and a state diagram. Mermaid renders after the
 * load event, asynchronously (startOnLoad), as pages embedding it do.
 */
import { esc, htmlDocument, inlineScript, inlineStyle, packageScript } from './assets.ts';
import type { FidelityCase } from './types.ts';

const DOC_CSS = `
  @page { size: A4; margin: 16mm 15mm; }
  body { font-family: sans-serif; color: #1e293b; font-size: 10.5pt; line-height: 1.5; margin: 0; }
  h1 { font-size: 18pt; margin: 0 0 2px; }
  h2 { font-size: 13pt; margin: 18px 0 6px; border-bottom: 1px solid #cbd5e1; padding-bottom: 2px; break-after: avoid; }
  .doc-meta { color: #64748b; font-size: 9pt; margin-bottom: 14px; }
  .mermaid { text-align: center; margin: 10px 0; break-inside: avoid; }
  .mermaid svg { max-height: 180mm; }
  table { border-collapse: collapse; width: 100%; font-size: 9.5pt; }
  th, td { border: 1px solid #cbd5e1; padding: 4px 6px; text-align: left; vertical-align: top; }
  th { background: #f1f5f9; }
  code { font-family: monospace; font-size: 9pt; background: #f1f5f9; padding: 0 3px; border-radius: 3px; }
`;

function mermaidPage(title: string, body: string): string {
  return htmlDocument({
    title,
    head: inlineStyle(DOC_CSS) + packageScript('mermaid', 'dist/mermaid.min.js'),
    body:
      body +
      inlineScript(
        "mermaid.initialize({ startOnLoad: true, theme: 'default', securityLevel: 'strict', flowchart: { useMaxWidth: true }, sequence: { useMaxWidth: true } });",
      ),
  });
}

const diagram = (source: string) => `<pre class="mermaid">\n${esc(source.trim())}\n</pre>`;

function flowchart(): FidelityCase {
  const chart = `
flowchart TD
    A([Order received]) --> B{Payment authorised?}
    B -- No --> C[Email customer:<br/>update payment details]
    C --> D{Updated within 48 h?}
    D -- No --> E([Cancel order])
    D -- Yes --> B
    B -- Yes --> F{All items in stock?}
    F -- Yes --> G[Pick and pack<br/>at nearest warehouse]
    F -- No --> H{Back-order date<br/>within 10 days?}
    H -- Yes --> I[Split shipment:<br/>ship available items]
    H -- No --> J[Offer substitute<br/>or partial refund]
    I --> G
    J --> G
    G --> K[Print label and<br/>hand to carrier]
    K --> L[Send tracking email]
    L --> M([Order complete])
    classDef terminal fill:#dbeafe,stroke:#1d4ed8,color:#1e3a8a
    classDef warn fill:#fee2e2,stroke:#b91c1c,color:#7f1d1d
    class A,M terminal
    class E warn
`;
  const body = `
    <h1>Order Fulfilment Process</h1>
    <div class="doc-meta">Process specification OPS-017 · Revision C · Owner: Fulfilment Operations · Effective 1 March 2024</div>
    <h2>1. Purpose</h2>
    <p>This specification describes how a web order moves from payment authorisation to hand-over to the carrier,
      including the rules for failed payments and items that are out of stock. It applies to all three warehouses
      (Reno, Columbus and Allentown) and to orders placed on the website and through the mobile app.</p>
    <h2>2. Process overview</h2>
    ${diagram(chart)}
    <h2>3. Service levels</h2>
    <table>
      <thead><tr><th>Step</th><th>Target</th><th>Measured by</th></tr></thead>
      <tbody>
        <tr><td>Payment authorisation</td><td>Within 2 minutes of order</td><td>Payment gateway log</td></tr>
        <tr><td>Pick and pack</td><td>Same day for orders before 14:00 local time</td><td>WMS pack confirmation</td></tr>
        <tr><td>Carrier hand-over</td><td>By the 18:30 collection</td><td>Carrier manifest scan</td></tr>
        <tr><td>Tracking email</td><td>Within 15 minutes of manifest scan</td><td>Email service delivery report</td></tr>
      </tbody>
    </table>
    <h2>4. Exceptions</h2>
    <p>Orders over $2,500, orders shipping to a different country than the billing address, and orders flagged by the
      fraud score (<code>risk ≥ 70</code>) are held for manual review before picking. A reviewer releases or cancels
      them within four business hours.</p>`;
  return {
    name: 'mermaid-flowchart',
    title: 'Process specification with a mermaid flowchart (rendered asynchronously on load)',
    html: mermaidPage('Order Fulfilment Process — OPS-017', body),
  };
}

function sequence(): FidelityCase {
  const flow = `
sequenceDiagram
    autonumber
    participant App as Merchant app
    participant API as Payments API
    participant Bank as Issuing bank
    participant Hook as Merchant webhook
    App->>API: POST /v2/payment-intents (amount, currency)
    API-->>App: 201 Created (intent id, client secret)
    App->>API: POST /v2/payment-intents/{id}/confirm
    API->>Bank: Authorisation request
    alt 3-D Secure required
        Bank-->>API: Challenge required
        API-->>App: 202 Accepted (next_action: redirect)
        App->>Bank: Cardholder completes challenge
        Bank-->>API: Challenge result
    end
    Bank-->>API: Approved (auth code)
    API-->>App: 200 OK (status: succeeded)
    API-)Hook: payment_intent.succeeded
    Hook-->>API: 204 No Content
    Note over API,Hook: Retried with exponential back-off for up to 72 hours
`;
  const states = `
stateDiagram-v2
    [*] --> requires_confirmation
    requires_confirmation --> processing: confirm
    processing --> requires_action: 3-D Secure
    requires_action --> processing: challenge passed
    requires_action --> canceled: challenge failed
    processing --> succeeded: approved
    processing --> requires_payment_method: declined
    requires_payment_method --> processing: new card
    succeeded --> [*]
    canceled --> [*]
`;
  const body = `
    <h1>Payments API — Card Payment Integration Guide</h1>
    <div class="doc-meta">API version 2024-06-01 · Developer documentation · Last reviewed 12 August 2024</div>
    <h2>Overview</h2>
    <p>A card payment is made in two calls: the merchant's server creates a <em>payment intent</em> for the amount, and
      the app confirms it with the card details collected by the hosted field. When the issuing bank asks for Strong
      Customer Authentication, the API answers <code>202</code> with a <code>next_action</code> the app must complete.</p>
    <h2>Message sequence</h2>
    ${diagram(flow)}
    <h2>Payment intent states</h2>
    ${diagram(states)}
    <h2>Errors</h2>
    <table><thead><tr><th>Code</th><th>Meaning</th><th>What to do</th></tr></thead><tbody>
      <tr><td><code>card_declined</code></td><td>The bank refused the authorisation.</td><td>Ask for another card.</td></tr>
      <tr><td><code>expired_card</code></td><td>The card's expiry date has passed.</td><td>Ask for another card.</td></tr>
      <tr><td><code>rate_limited</code></td><td>More than 100 requests per second.</td><td>Retry after the <code>Retry-After</code> delay.</td></tr>
    </tbody></table>`;
  return {
    name: 'mermaid-sequence',
    title: 'API integration guide with a mermaid sequence diagram and state diagram (asynchronous render)',
    html: mermaidPage('Payments API — Card Payment Integration Guide', body),
  };
}

export function diagramCases(): FidelityCase[] {
  return [flowchart(), sequence()];
}
