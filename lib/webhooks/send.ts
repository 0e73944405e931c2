/**
 * Where webhooks may go, and sending one: through the same egress rules as documents
 * (lib/egress/destinations.ts), checked when the job is submitted and again at every delivery.
 *
 * A delivery connects to the very address that was checked (the name is resolved once, and the
 * connection is pinned to that answer), so a name that turns into an internal address between the
 * check and the connection (DNS rebinding) cannot get through. TLS is still verified against the
 * URL's host name. Redirects are not followed: a 3xx is a failed delivery, like any non-2xx.
 */
import type { LookupFunction } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { hostPortOf, portOf, resolveDestination, type EgressPolicy } from '#lib/egress/destinations.ts';

/**
 * Whether a webhook URL may be called now: the address to connect to, or why not, in words a
 * caller can act on. With `nameTheAllowance` (the local stack, where the caller is the operator), a
 * refusal that the deployment could lift says how: a plain-http or loopback receiver on the
 * developer's machine is what trying webhooks locally needs, and only a setting allows it.
 */
export async function checkWebhookUrl(
  raw: string,
  policy: EgressPolicy,
  { nameTheAllowance = false }: { nameTheAllowance?: boolean } = {},
): Promise<{ url: URL; address: string } | { problem: string }> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'webhook_url is not a valid absolute URL' };
  }
  const allowListed = policy.allowPrivateHosts.has(hostPortOf(url));
  const allowance = nameTheAllowance && !allowListed ? ` ${localAllowance(url)}` : '';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowListed)) return { problem: `webhook_url must be an https URL.${allowance}` };
  const destination = await resolveDestination(url.hostname, portOf(url), policy);
  if (destination.allowed) return { url, address: destination.address };
  if (destination.reason === 'unresolvable') return { problem: `webhook_url's host ${JSON.stringify(url.hostname)} does not resolve` };
  return { problem: `webhook_url must point to a publicly reachable host, not a private, loopback or link-local address.${allowance}` };
}

/** How the operator of a local stack lets a receiver on their machine be called (docs/async-and-webhooks.md). */
function localAllowance(url: URL): string {
  const hostPort = hostPortOf(url);
  return `To send webhooks to a receiver on this machine, restart the local stack with PDF_ALLOW_PRIVATE_HOSTS=${hostPort} (comma-separated host:port entries): a listed host:port may be private and plain http.`;
}

export type SendOutcome =
  | { readonly delivered: true; readonly status: number }
  | { readonly delivered: false; /** The receiver's status, when it answered. */ readonly status?: number; readonly reason: string };

/** Most of a receiver's answer that is read (and thrown away): a receiver cannot make us hold more. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs `body` to `url` with `headers`, pinned to the address the egress rules allowed. The outcome
 * is the answer's status, known as soon as its headers arrive (2xx: delivered).
 */
export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  options: EgressPolicy & { timeoutMs: number },
): Promise<SendOutcome> {
  const checked = await checkWebhookUrl(url, options);
  if ('problem' in checked) return { delivered: false, reason: checked.problem };
  const { url: target, address } = checked;
  const pinned: LookupFunction = (_host, lookupOptions, callback) => {
    const family = isIP(address);
    if ((lookupOptions as { all?: boolean }).all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendOutcome>((resolve) => {
    // The answer's status has timeoutMs from the start of the exchange, not from each pause in it:
    // a receiver that sends its headers a byte at a time cannot hold a sender longer than that.
    // Past it, whatever is still being read of the answer is dropped too.
    const deadline = setTimeout(() => outgoing.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    let settled = false;
    const settle = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    const outgoing = request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), 'User-Agent': 'pdf-api-webhooks/1' },
        lookup: pinned,
        // One connection per delivery: a kept-alive socket could outlive the check of its address.
        agent: false,
      },
      (response) => {
        // The status decides, as soon as it arrives: a receiver that answered 2xx has the event,
        // however slowly the rest of its answer comes. The body means nothing to us: it is read
        // (and thrown away) in the background, up to MAX_ANSWER_BYTES and the deadline, then the
        // connection is dropped.
        const status = response.statusCode ?? 0;
        settle(status >= 200 && status < 300 ? { delivered: true, status } : { delivered: false, status, reason: `the receiver answered ${status}` });
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) outgoing.destroy();
        });
        response.on('error', () => undefined);
      },
    );
    outgoing.on('error', (error) => settle({ delivered: false, reason: `the receiver could not be reached: ${error.message}` }));
    outgoing.once('close', () => clearTimeout(deadline));
    outgoing.end(body);
  });
}
