/**
 * The ways out of a document that are not plain HTTP requests: WebRTC (STUN, TURN, ICE candidates,
 * data channels, mDNS), WebTransport, WebSockets, connection hints and beacons.
 *
 * A proxy sees only what is sent through it, so these tests do not ask the egress guard what it
 * saw: they listen where the traffic would arrive, with UDP and TCP listeners of their own on
 * IPv4 and IPv6 loopback and on this machine's other addresses, and expect nothing to arrive.
 * A listener that hears nothing proves nothing by itself, so the positive control runs the same
 * documents in a plain Chromium (same executable and base flags, but neither the flags of
 * lib/egress/browser-channels.ts nor a proxy) and expects every listener to hear them.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import chromium from '@sparticuz/chromium';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { BROWSER_CHANNEL_FLAGS } from '#lib/egress/browser-channels.ts';
import { CHROMIUM_FLAGS } from '#lib/render/browser.ts';
import { createKey, generateAndDownload, requestsReceivedBy, type TestKey } from '../support/api.ts';
import { readPdf } from '../support/pdf.ts';

const internalSite = inject('internalSite');
const publicSite = inject('publicSite');

/** How long every document keeps its channels busy before it reports: ample for ICE on loopback. */
const VECTOR_MS = 1_500;
/** Packets still in flight on loopback when a document ends. */
const GRACE_MS = 200;

/** This machine's addresses other than loopback: where an intranet service would listen. */
function localAddresses(): { v4?: string; v6?: string } {
  const all = Object.values(networkInterfaces()).flatMap((entries) => entries ?? []);
  return {
    v4: all.find((entry) => entry.family === 'IPv4' && !entry.internal)?.address,
    // Link-local IPv6 needs a zone index to be reached; a global or unique-local address does not.
    v6: all.find((entry) => entry.family === 'IPv6' && !entry.internal && entry.scopeid === 0)?.address,
  };
}

const LOCAL = localAddresses();
const ADDRESSES: readonly string[] = ['127.0.0.1', '::1', ...(LOCAL.v4 ? [LOCAL.v4] : []), ...(LOCAL.v6 ? [LOCAL.v6] : [])];
/** Goes into test names, so that a run on a machine with loopback only says so. */
const LISTENED_ON =
  ADDRESSES.join(', ') +
  (LOCAL.v4 || LOCAL.v6 ? '' : ' (this machine has no non-loopback address, so only loopback is listened on)');

const bracketed = (address: string) => (address.includes(':') ? `[${address}]` : address);

interface Trap {
  readonly address: string;
  readonly udpPort: number;
  readonly tcpPort: number;
}

/** A UDP and a TCP listener on each address, recording whatever reaches them. */
class Traps {
  readonly byAddress = new Map<string, Trap>();
  readonly heard: string[] = [];
  private readonly closers: (() => Promise<void>)[] = [];

  static async open(): Promise<Traps> {
    const traps = new Traps();
    for (const address of ADDRESSES) await traps.listen(address);
    return traps;
  }

  private async listen(address: string): Promise<void> {
    const udp = dgram.createSocket({ type: address.includes(':') ? 'udp6' : 'udp4' });
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, address, () => resolve());
    });
    udp.on('message', (message, from) => this.heard.push(`udp ${address} <- ${from.address} (${message.length} bytes)`));
    this.closers.push(() => new Promise<void>((resolve) => udp.close(() => resolve())));

    const tcp = net.createServer((socket) => {
      this.heard.push(`tcp ${address} <- ${socket.remoteAddress}`);
      socket.on('error', () => undefined);
      socket.destroy();
    });
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(0, address, () => resolve());
    });
    this.closers.push(() => new Promise<void>((resolve) => tcp.close(() => resolve())));

    this.byAddress.set(address, { address, udpPort: udp.address().port, tcpPort: (tcp.address() as net.AddressInfo).port });
  }

  get all(): Trap[] {
    return [...this.byAddress.values()];
  }

  trap(address: string): Trap {
    return this.byAddress.get(address) as Trap;
  }

  /** What each address heard, as `{ address: ['udp …', 'tcp …'] }`, every address listed. */
  heardByAddress(): Record<string, string[]> {
    return Object.fromEntries(ADDRESSES.map((address) => [address, this.heard.filter((line) => line.split(' ')[1] === address)]));
  }

  async close(): Promise<void> {
    await Promise.all(this.closers.map((close) => close()));
  }
}

const NOTHING_HEARD = Object.fromEntries(ADDRESSES.map((address) => [address, []]));

/**
 * Listens for multicast DNS (224.0.0.251:5353) on this machine's IPv4 interface, counting only the
 * queries that carry `marker` (other software on the host may speak mDNS too).
 */
async function openMdnsTrap(marker: string, interfaceAddress: string) {
  const socket = dgram.createSocket({ type: 'udp4', reuseAddr: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(5353, '0.0.0.0', () => resolve());
  });
  socket.addMembership('224.0.0.251', interfaceAddress);
  const heard: string[] = [];
  socket.on('message', (message, from) => {
    if (message.toString('latin1').includes(marker)) heard.push(`mdns <- ${from.address}`);
  });
  return { heard, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}

/**
 * A document around one vector: `script` runs with `report(text)` to note what happened; after
 * VECTOR_MS the notes are written into the page (so the PDF shows that the vector really ran) and
 * `window.done` is set, which both the service (wait_for_expression) and the control wait for.
 */
function vectorDocument(script: string, head = ''): string {
  return `<!doctype html>${head}<p id="out">running</p><script>
    window.done = false;
    (() => {
      const notes = [];
      const report = (text) => notes.push(text);
      try {
        ${script}
      } catch (error) {
        report('threw-' + error.name);
      }
      setTimeout(() => {
        document.getElementById('out').textContent = 'REPORT ' + notes.join(' ') + ' END';
        window.done = true;
      }, ${VECTOR_MS});
    })();
  </script>`;
}

/** ICE gathering against the given servers, as a page calling a STUN or TURN server would. */
interface IceServer {
  readonly urls: string;
  readonly username?: string;
  readonly credential?: string;
}

function iceGathering(iceServers: IceServer[]): string {
  return vectorDocument(`
    const pc = new RTCPeerConnection({ iceServers: ${JSON.stringify(iceServers)} });
    report('peer-connection');
    let candidates = 0;
    pc.onicecandidate = (event) => { if (event.candidate) candidates++; };
    pc.onicegatheringstatechange = () => report('gathering-' + pc.iceGatheringState + '-candidates-' + candidates);
    pc.createDataChannel('x');
    pc.createOffer().then((offer) => pc.setLocalDescription(offer));
  `);
}

/**
 * No server needed: the document hands its peer connection remote candidates naming internal
 * addresses, and ICE sends its connectivity checks there.
 */
function remoteCandidates(candidates: string[]): string {
  return vectorDocument(`
    const pc = new RTCPeerConnection();
    pc.createDataChannel('x');
    (async () => {
      const offer = await pc.createOffer();
      await pc.setLocalDescription(offer);
      // The page's own offer, with other ICE credentials, plays the remote peer's answer.
      const sdp = offer.sdp
        .replace(/a=ice-ufrag:.*/, 'a=ice-ufrag:peer')
        .replace(/a=ice-pwd:.*/, 'a=ice-pwd:peerpeerpeerpeerpeerpeer')
        .replace('a=setup:actpass', 'a=setup:active');
      await pc.setRemoteDescription({ type: 'answer', sdp });
      for (const candidate of ${JSON.stringify(candidates)}) {
        await pc.addIceCandidate({ candidate, sdpMid: '0' }).then(() => report('added'), (error) => report('refused-' + error.name));
      }
    })().catch((error) => report('failed-' + error.name));
  `);
}

function hostCandidate(address: string, port: number, protocol: 'udp' | 'tcp', foundation: number): string {
  const tcp = protocol === 'tcp' ? ' tcptype passive' : '';
  return `candidate:${foundation} 1 ${protocol} 2122260223 ${address} ${port} typ host${tcp} generation 0`;
}

/** Two peer connections of one page connecting to each other over whatever candidates they find. */
const LOCAL_DATA_CHANNEL = vectorDocument(`
  const a = new RTCPeerConnection();
  const b = new RTCPeerConnection();
  let candidates = 0;
  a.onicecandidate = (event) => { if (event.candidate) { candidates++; b.addIceCandidate(event.candidate); } };
  b.onicecandidate = (event) => { if (event.candidate) { candidates++; a.addIceCandidate(event.candidate); } };
  const channel = a.createDataChannel('x');
  channel.onopen = () => report('channel-open');
  (async () => {
    const offer = await a.createOffer();
    await a.setLocalDescription(offer);
    await b.setRemoteDescription(offer);
    const answer = await b.createAnswer();
    await b.setLocalDescription(answer);
    await a.setRemoteDescription(answer);
    report('negotiated');
  })();
  setTimeout(() => report('candidates-' + candidates), ${VECTOR_MS - 100});
`);

/** WebTransport (HTTP/3 over QUIC, over UDP) to each address; certificate hashes spare it a CA. */
function webTransport(urls: string[]): string {
  return vectorDocument(`
    report('webtransport-' + typeof WebTransport);
    for (const url of ${JSON.stringify(urls)}) {
      const session = new WebTransport(url, { serverCertificateHashes: [{ algorithm: 'sha-256', value: new Uint8Array(32) }] });
      session.ready.then(() => report('webtransport-ready'), () => report('webtransport-failed'));
      session.closed.catch(() => undefined);
    }
  `);
}

/** The fixture site's page serving `html`: a secure context, as a customer's own https page is. */
const servedByPublicSite = (html: string) => `${publicSite}/document?html=${encodeURIComponent(html)}`;

let key: TestKey;
let traps: Traps;

beforeAll(async () => {
  key = await createKey('enterprise');
});

beforeEach(async () => {
  // Fresh listeners (fresh ports) per test: nothing a previous document sent can be counted here.
  traps = await Traps.open();
});

afterEach(async () => {
  await traps.close();
});

/** Renders through the service, waits for stragglers, and returns the PDF's text. */
async function renderInService(document: { html: string } | { url: string }): Promise<string> {
  const { bytes } = await generateAndDownload(key.apiKey, { ...document, wait_for_expression: 'window.done === true' });
  await new Promise((resolve) => setTimeout(resolve, GRACE_MS));
  return (await readPdf(bytes)).text;
}

async function internalRequestsMatching(marker: string): Promise<string[]> {
  return (await requestsReceivedBy(internalSite)).filter((path) => path.includes(marker));
}

/** TURN with credentials of odd bytes, over UDP, TCP and TLS, to each address and to localhost. */
function turnServers(t: Traps): IceServer[] {
  const credentials = { username: 'user\u0001\u00ff\u2603', credential: 'secret\u0000?' };
  const servers: IceServer[] = t.all.flatMap((trap) => {
    const host = bracketed(trap.address);
    return [
      { urls: `turn:${host}:${trap.udpPort}`, ...credentials },
      { urls: `turn:${host}:${trap.tcpPort}?transport=tcp`, ...credentials },
      { urls: `turns:${host}:${trap.tcpPort}?transport=tcp`, ...credentials },
    ];
  });
  servers.push({ urls: `turn:localhost:${t.trap('127.0.0.1').tcpPort}?transport=tcp`, ...credentials });
  return servers;
}

/**
 * The WebRTC and WebTransport vectors, each built against the listeners it aims at; the service's
 * tests and the positive control run the very same documents.
 */
const VECTORS = {
  stun: (t: Traps) => iceGathering(t.all.map((trap) => ({ urls: `stun:${bracketed(trap.address)}:${trap.udpPort}` }))),
  // Chromium resolved STUN host names itself, past the guard.
  stunByName: (t: Traps) =>
    iceGathering([{ urls: `stun:localhost:${t.trap('127.0.0.1').udpPort}` }, { urls: `stun:localhost:${t.trap('::1').udpPort}` }]),
  turn: (t: Traps) => iceGathering(turnServers(t)),
  remoteCandidates: (t: Traps) =>
    remoteCandidates(
      t.all.flatMap((trap, index) => [
        hostCandidate(trap.address, trap.udpPort, 'udp', 2 * index + 1),
        hostCandidate(trap.address, trap.tcpPort, 'tcp', 2 * index + 2),
      ]),
    ),
  // Any name the document likes, ending in .local, is asked for on the local network by multicast DNS.
  mdns: (t: Traps, marker: string) =>
    remoteCandidates([`candidate:1 1 udp 2122260223 ${marker}.local ${t.trap('127.0.0.1').udpPort} typ host`]),
  webTransport: (t: Traps) => webTransport(t.all.map((trap) => `https://${bracketed(trap.address)}:${trap.udpPort}/`)),
};

/** `udp <address>` (or tcp) for every address listened on. */
const onEveryAddress = (...protocols: string[]) => ADDRESSES.flatMap((address) => protocols.map((protocol) => `${protocol} ${address}`));

describe('positive control: a plain Chromium, without the channel flags and without a proxy', () => {
  let browser: Browser | undefined;

  afterEach(async () => {
    await browser?.close();
    browser = undefined;
  });

  it(`sends the same vectors to every listener (${LISTENED_ON})`, async () => {
    // Prepare: the service's executable and base flags, minus the channel flags and the proxy
    const args = [...CHROMIUM_FLAGS];
    for (const flag of BROWSER_CHANNEL_FLAGS) expect(args).not.toContain(flag);
    chromium.setGraphicsMode = false;
    const launched = await puppeteer.launch({
      executablePath: process.env.CHROME_PATH || (await chromium.executablePath()),
      headless: 'shell',
      pipe: true,
      args,
    });
    browser = launched;
    /**
     * Runs one document in a page of its own, against listeners of its own (so the documents can
     * run side by side), until everything in `expected` was heard (ICE paces its checks, so that may
     * take longer than the document's own time) or ten seconds passed. Returns what was not heard.
     */
    const run = async (build: (t: Traps) => string, expected: string[], { secure = false } = {}) => {
      const own = await Traps.open();
      const page = await launched.newPage();
      try {
        const html = build(own);
        await (secure ? page.goto(servedByPublicSite(html)) : page.setContent(html));
        await page.waitForFunction('window.done === true', { timeout: 10_000 });
        const missing = () => expected.filter((prefix) => !own.heard.some((line) => line.startsWith(`${prefix} `)));
        for (const deadline = Date.now() + 10_000; missing().length > 0 && Date.now() < deadline; ) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        return { missing: missing(), report: await page.$eval('#out', (element) => element.textContent ?? '') };
      } finally {
        await page.close();
        await own.close();
      }
    };
    const mdnsMarker = `control-${Date.now().toString(36)}`;
    const mdns = LOCAL.v4 ? await openMdnsTrap(mdnsMarker, LOCAL.v4) : undefined;

    try {
      // Act
      const [stun, stunByName, turn, candidates, dataChannel, mdnsQuery, transport] = await Promise.all([
        run(VECTORS.stun, onEveryAddress('udp')),
        run(VECTORS.stunByName, ['udp 127.0.0.1']),
        run(VECTORS.turn, onEveryAddress('udp', 'tcp')),
        run(VECTORS.remoteCandidates, onEveryAddress('udp', 'tcp')),
        run(() => LOCAL_DATA_CHANNEL, []),
        run((t) => VECTORS.mdns(t, mdnsMarker), []),
        run(VECTORS.webTransport, onEveryAddress('udp'), { secure: true }),
      ]);

      // Assess: every vector reached every listener, so silence in the service's tests means something
      expect(stun.missing, 'STUN').toEqual([]);
      expect(stunByName.missing, 'STUN by host name').toEqual([]);
      expect(turn.missing, 'TURN').toEqual([]);
      expect(candidates.missing, 'remote candidates').toEqual([]);
      expect(dataChannel.report).toContain('channel-open');
      expect(mdnsQuery.report).toContain('added');
      if (mdns) expect(mdns.heard.length, `mDNS query for ${mdnsMarker}.local`).toBeGreaterThan(0);
      expect(transport.report).toContain('webtransport-function');
      expect(transport.missing, 'WebTransport').toEqual([]);
    } finally {
      await mdns?.close();
    }
  });
});

describe('WebRTC from a document reaches no internal address', () => {
  it(`STUN to IP literals: nothing arrives at ${LISTENED_ON}`, async () => {
    // Act
    const text = await renderInService({ html: VECTORS.stun(traps) });

    // Assess: the document ran, gathered nothing, and no listener heard a packet
    expect(text).toContain('peer-connection');
    expect(text).not.toMatch(/candidates-[1-9]/);
    expect(traps.heardByAddress()).toEqual(NOTHING_HEARD);
  });

  it('STUN to a host name that resolves to loopback (localhost): nothing arrives on 127.0.0.1 or ::1', async () => {
    // Act
    const text = await renderInService({ html: VECTORS.stunByName(traps) });

    // Assess
    expect(text).toContain('peer-connection');
    expect(traps.heardByAddress()).toEqual(NOTHING_HEARD);
  });

  it(`TURN with arbitrary username bytes, over UDP, TCP and TLS: nothing arrives at ${LISTENED_ON}`, async () => {
    // Act: TCP TURN can only go through the guard, which refuses these addresses
    const text = await renderInService({ html: VECTORS.turn(traps) });

    // Assess
    expect(text).toContain('peer-connection');
    expect(traps.heardByAddress()).toEqual(NOTHING_HEARD);
  });

  it(`remote ICE candidates naming internal addresses (UDP and TCP): no connectivity check arrives at ${LISTENED_ON}`, async () => {
    // Act
    const text = await renderInService({ html: VECTORS.remoteCandidates(traps) });

    // Assess: the candidates were accepted by the page, yet nothing was sent to them
    expect(text).toContain('added');
    expect(traps.heardByAddress()).toEqual(NOTHING_HEARD);
  });

  it('a data channel between two peer connections of one page: no local candidate, never opens', async () => {
    // Act
    const text = await renderInService({ html: LOCAL_DATA_CHANNEL });

    // Assess: no host candidate is gathered (so no local address is exposed either), nothing connects
    expect(text).toContain('negotiated');
    expect(text).toContain('candidates-0');
    expect(text).not.toContain('channel-open');
    expect(traps.heardByAddress()).toEqual(NOTHING_HEARD);
  });

  it.skipIf(!LOCAL.v4)(
    LOCAL.v4
      ? `a remote ".local" candidate: no mDNS query for the document's name reaches the network (listening on ${LOCAL.v4})`
      : 'a remote ".local" candidate sends no mDNS query (not checked: this machine has no non-loopback IPv4 address to listen on)',
    async () => {
      // Prepare
      const marker = `leak-${Date.now().toString(36)}`;
      const mdns = await openMdnsTrap(marker, LOCAL.v4 as string);
      try {
        // Act
        const text = await renderInService({ html: VECTORS.mdns(traps, marker) });

        // Assess
        expect(text).toContain('added');
        expect(mdns.heard).toEqual([]);
        expect(traps.heardByAddress()).toEqual(NOTHING_HEARD);
      } finally {
        await mdns.close();
      }
    },
  );
});

describe('other channels from a document reach no internal address', () => {
  it(`WebTransport (QUIC over UDP) from a secure context: nothing arrives at ${LISTENED_ON}`, async () => {
    // Act: served by the public fixture site, a secure context, where WebTransport exists
    const text = await renderInService({ url: servedByPublicSite(VECTORS.webTransport(traps)) });

    // Assess: the API was there and was used, and failed without a packet
    expect(text).toContain('webtransport-function');
    expect(text).toContain('webtransport-failed');
    expect(text).not.toContain('webtransport-ready');
    expect(traps.heardByAddress()).toEqual(NOTHING_HEARD);
  });

  it(`WebSocket to private addresses: the internal site sees no request, nothing arrives at ${LISTENED_ON}`, async () => {
    // Prepare
    const marker = `channels-ws-${Date.now().toString(36)}`;
    const internalPort = new URL(internalSite).port;
    const urls = [
      `ws://127.0.0.1:${internalPort}/canary?m=${marker}`,
      `ws://localhost:${internalPort}/canary?m=${marker}`,
      ...traps.all.map((trap) => `ws://${bracketed(trap.address)}:${trap.tcpPort}/?m=${marker}`),
    ];
    const html = vectorDocument(`
      for (const url of ${JSON.stringify(urls)}) {
        const socket = new WebSocket(url);
        socket.onopen = () => report('ws-open');
        socket.onerror = () => report('ws-error');
      }
    `);

    // Act
    const text = await renderInService({ html });

    // Assess
    expect(text).toContain('ws-error');
    expect(text).not.toContain('ws-open');
    expect(await internalRequestsMatching(marker)).toEqual([]);
    expect(traps.heardByAddress()).toEqual(NOTHING_HEARD);
  });

  it('WebSocket to a public URL that redirects to the internal site: the redirect is not followed', async () => {
    // Prepare: the public site answers the handshake with a redirect (its open /redirect route)
    const marker = `channels-ws-redirect-${Date.now().toString(36)}`;
    const publicWs = publicSite.replace(/^http/, 'ws');
    const internalWs = internalSite.replace(/^http/, 'ws');
    const urls = [
      `${publicWs}/redirect?to=${encodeURIComponent(`${internalWs}/canary?m=${marker}`)}`,
      `${publicWs}/redirect?to=${encodeURIComponent(`${internalSite}/canary?m=${marker}`)}`,
    ];
    const html = vectorDocument(`
      for (const url of ${JSON.stringify(urls)}) {
        const socket = new WebSocket(url);
        socket.onopen = () => report('ws-open');
        socket.onerror = () => report('ws-error');
      }
    `);

    // Act
    const text = await renderInService({ html });

    // Assess: the public site was asked (the vector ran), the internal one never was
    expect(text).toContain('ws-error');
    expect((await requestsReceivedBy(publicSite)).filter((path) => path.includes(marker)).length).toBeGreaterThan(0);
    expect(await internalRequestsMatching(marker)).toEqual([]);
  });

  it(`dns-prefetch, preconnect and prefetch hints to internal hosts: nothing arrives at ${LISTENED_ON} or the internal site`, async () => {
    // Prepare. This headless Chromium does not act on dns-prefetch or preconnect even without a proxy;
    // the test is there for the Chromium that one day does.
    const marker = `channels-hints-${Date.now().toString(36)}`;
    const internalPort = new URL(internalSite).port;
    const hints = traps.all.flatMap((trap) => {
      const host = bracketed(trap.address);
      return [
        `<link rel="dns-prefetch" href="//${host}:${trap.tcpPort}">`,
        `<link rel="preconnect" href="http://${host}:${trap.tcpPort}">`,
        `<link rel="preconnect" href="https://${host}:${trap.tcpPort}" crossorigin>`,
      ];
    });
    hints.push(
      `<link rel="dns-prefetch" href="//localhost:${internalPort}">`,
      `<link rel="preconnect" href="http://localhost:${traps.trap('127.0.0.1').tcpPort}">`,
      `<link rel="preconnect" href="${internalSite}">`,
      `<link rel="prefetch" href="${internalSite}/canary?m=${marker}">`,
    );
    const html = vectorDocument(`report('hinted');`, hints.join(''));

    // Act
    const text = await renderInService({ html });

    // Assess
    expect(text).toContain('hinted');
    expect(await internalRequestsMatching(marker)).toEqual([]);
    expect(traps.heardByAddress()).toEqual(NOTHING_HEARD);
  });

  it('navigator.sendBeacon to internal addresses: nothing arrives, while a beacon to the public site does', async () => {
    // Prepare: the public beacon proves the document's beacons are sent at all
    const marker = `channels-beacon-${Date.now().toString(36)}`;
    const internalPort = new URL(internalSite).port;
    const internalUrls = [
      `${internalSite}/canary?m=${marker}`,
      `http://localhost:${internalPort}/canary?m=${marker}`,
      ...traps.all.map((trap) => `http://${bracketed(trap.address)}:${trap.tcpPort}/?m=${marker}`),
    ];
    const html = vectorDocument(`
      report('public-' + navigator.sendBeacon(${JSON.stringify(`${publicSite}/page?m=${marker}`)}, 'x'));
      for (const url of ${JSON.stringify(internalUrls)}) report('internal-' + navigator.sendBeacon(url, 'data'));
    `);

    // Act
    const text = await renderInService({ html });

    // Assess
    expect(text).toContain('public-true');
    expect(await requestsReceivedBy(publicSite)).toContain(`/page?m=${marker}`);
    expect(await internalRequestsMatching(marker)).toEqual([]);
    expect(traps.heardByAddress()).toEqual(NOTHING_HEARD);
  });
});
