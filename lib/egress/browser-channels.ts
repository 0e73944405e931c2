/**
 * The ways out of a renderer that are not HTTP, and the Chromium flags that close them.
 *
 * The egress guard (./guard.ts) sees only what Chromium sends through its proxy. Whatever Chromium
 * sends by itself, past the proxy, no policy of ours can refuse; so every such channel has to be
 * closed in the browser, and each one is proved closed by a test of its own that listens where
 * the traffic would arrive (test/integration/egress-channels.test.ts, which also runs the same
 * vectors in a Chromium without these flags and sees them arrive).
 *
 * Measured on this Chromium (153, @sparticuz/chromium, headless shell) with the guard as proxy:
 * - WebRTC leaked without these flags. STUN and TURN over UDP to any address or host name
 *   (Chromium resolved the names itself), a remote ICE candidate naming any address and port (its
 *   connectivity checks went there over UDP, about 70 packets in 4 s), host candidates and a data
 *   channel between two peer connections of one page, and remote `.local` candidates, which made
 *   Chromium multicast mDNS queries for a name the document chose onto the local network.
 *   TURN over TCP and remote TCP candidates already went through the proxy (and were refused).
 * - Closed without a flag, because a proxy is configured (so no flag is kept for them):
 *   WebTransport: Chromium fails every WebTransport session when a proxy is configured for its URL
 *   (net/quic/dedicated_web_transport_http3_client.cc, DoCheckProxyComplete); not one UDP packet.
 *   HTTP/3 (QUIC): Chromium uses QUIC only on direct connections. Even with QUIC forced on for every
 *   origin (--origin-to-force-quic-on=*), a fetch went to the guard as CONNECT and sent no UDP, so
 *   --disable-quic would change nothing and is not used.
 *   WebSocket, sendBeacon, preconnect: through the proxy, so the guard decides (preconnect and
 *   dns-prefetch hints are not acted on by this headless Chromium at all).
 * - Not used: --host-resolver-rules. With the proxy and the flags below, the only names Chromium
 *   still resolves for a document (traced with strace) are the `.local` names of remote ICE
 *   candidates, by ordinary DNS: the same kind of query the guard makes for any host a document
 *   names, and the answer is never connected to except through the guard (no UDP; TCP candidates go
 *   to the guard as CONNECT). STUN and TURN host names are no longer resolved at all. A rule has
 *   nothing to stop, and `MAP * ~NOTFOUND` also maps the proxy's own 127.0.0.1 and broke every
 *   request (ERR_PROXY_CONNECTION_FAILED); with `EXCLUDE 127.0.0.1` it did not stop the mDNS
 *   queries either, which do not go through those rules.
 */

/**
 * Flags for the browser's command line, next to the proxy flags; they concern networking only and
 * leave what prints unchanged (the fidelity harness). Each one is needed: remove it and a test in
 * test/integration/egress-channels.test.ts fails.
 */
export const BROWSER_CHANNEL_FLAGS: readonly string[] = [
  // WebRTC may use UDP only through a proxy that offers UDP (ours does not), else TCP through the
  // proxy, which is the guard. So no STUN, no TURN over UDP, no host candidates (no local address is
  // gathered or shown either) and no connectivity checks to a remote candidate's address: what is
  // left, TURN over TCP and TCP candidates, arrives at the guard as CONNECT and is judged like any
  // request. It also stops Chromium resolving STUN and TURN host names itself.
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  // A remote ICE candidate whose address ends in `.local` makes Chromium send multicast DNS queries
  // (224.0.0.251:5353) for that name, any name the document likes, onto the local network, even
  // under the policy above, which only stops traffic to the peer. This feature is what resolves such
  // names by mDNS (and hides local addresses behind mDNS names, moot when none are gathered);
  // without it the name goes to ordinary DNS instead, like any host a document asks the guard for.
  '--disable-features=WebRtcHideLocalIpsWithMdns',
];
