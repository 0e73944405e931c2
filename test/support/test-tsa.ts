/**
 * An RFC 3161 time-stamp authority for tests (SIGNATURE_TSA_URL): answers a TimeStampReq with a
 * token signed by its own certificate (critical extendedKeyUsage timeStamping, as RFC 3161 2.3 asks),
 * with the signing-certificate-v2 attribute (RFC 5816) that `openssl ts -verify` checks. It can be
 * told to stall (never answer) or to refuse, for the failure paths: by `mode` in its own process, or
 * from another (a test worker, when it serves the shared test stack) with `PUT <origin>/mode`.
 */
import { createHash, webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

const subtle = webcrypto.subtle as unknown as SubtleCrypto;
const pem = (der: ArrayBuffer) => `-----BEGIN CERTIFICATE-----\n${Buffer.from(der).toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
const TST_INFO = '1.2.840.113549.1.9.16.1.4';
const TSA_POLICY = '1.3.6.1.4.1.99999.1';

export interface TestTsa {
  readonly url: string;
  readonly certificatePem: string;
  /** 'answer' (default), 'stall' (accept the request, never answer), 'refuse' (status rejection). */
  mode: 'answer' | 'stall' | 'refuse';
  /** How many requests it got. */
  readonly requests: number;
  close(): Promise<void>;
}

export async function startTestTsa(): Promise<TestTsa> {
  const keys = (await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const name = new pkijs.RelativeDistinguishedNames({ typesAndValues: [new pkijs.AttributeTypeAndValue({ type: '2.5.4.3', value: new asn1js.Utf8String({ value: 'pdf-api Test TSA' }) })] });
  const certificate = new pkijs.Certificate({ version: 2, serialNumber: new asn1js.Integer({ value: 77 }), issuer: name, subject: name });
  certificate.notBefore.value = new Date(Date.now() - 86_400_000);
  certificate.notAfter.value = new Date(Date.now() + 365 * 86_400_000);
  certificate.extensions = [
    new pkijs.Extension({ extnID: '2.5.29.37', critical: true, extnValue: new pkijs.ExtKeyUsage({ keyPurposes: ['1.3.6.1.5.5.7.3.8'] }).toSchema().toBER() }),
  ];
  await certificate.subjectPublicKeyInfo.importKey(keys.publicKey);
  await certificate.sign(keys.privateKey, 'SHA-256');
  const certificateDer = certificate.toSchema(true).toBER();
  let serial = 1;
  let requests = 0;
  const state = { mode: 'answer' as TestTsa['mode'] };

  async function respond(body: Buffer): Promise<ArrayBuffer> {
    const request = pkijs.TimeStampReq.fromBER(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer);
    if (state.mode === 'refuse') return new pkijs.TimeStampResp({ status: new pkijs.PKIStatusInfo({ status: 2 }) }).toSchema().toBER();
    const info = new pkijs.TSTInfo({
      version: 1,
      policy: TSA_POLICY,
      messageImprint: request.messageImprint,
      serialNumber: new asn1js.Integer({ value: serial++ }),
      genTime: new Date(),
      ...(request.nonce && { nonce: request.nonce }),
    });
    const infoDer = info.toSchema().toBER();
    const essCertIdV2 = new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: createHash('sha256').update(Buffer.from(certificateDer)).digest() })] });
    const signedData = new pkijs.SignedData({
      version: 3,
      encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: TST_INFO, eContent: new asn1js.OctetString({ valueHex: infoDer }) }),
      signerInfos: [
        new pkijs.SignerInfo({
          version: 1,
          sid: new pkijs.IssuerAndSerialNumber({ issuer: certificate.issuer, serialNumber: certificate.serialNumber }),
          signedAttrs: new pkijs.SignedAndUnsignedAttributes({
            type: 0,
            attributes: [
              new pkijs.Attribute({ type: '1.2.840.113549.1.9.3', values: [new asn1js.ObjectIdentifier({ value: TST_INFO })] }),
              new pkijs.Attribute({ type: '1.2.840.113549.1.9.4', values: [new asn1js.OctetString({ valueHex: createHash('sha256').update(Buffer.from(infoDer)).digest() })] }),
              new pkijs.Attribute({ type: '1.2.840.113549.1.9.16.2.47', values: [new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertIdV2] })] })] }),
            ],
          }),
        }),
      ],
      certificates: request.certReq ? [certificate] : [],
    });
    await signedData.sign(keys.privateKey, 0, 'SHA-256');
    const token = new pkijs.ContentInfo({ contentType: '1.2.840.113549.1.7.2', content: signedData.toSchema(true) });
    return new pkijs.TimeStampResp({ status: new pkijs.PKIStatusInfo({ status: 0 }), timeStampToken: token }).toSchema().toBER();
  }

  const server: Server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method === 'PUT' && request.url === '/mode') {
      const mode = Buffer.concat(chunks).toString('utf8');
      if (mode !== 'answer' && mode !== 'stall' && mode !== 'refuse') return void response.writeHead(400).end();
      state.mode = mode;
      return void response.writeHead(204).end();
    }
    requests++;
    if (state.mode === 'stall') return; // the client's timeout ends it
    try {
      const answer = await respond(Buffer.concat(chunks));
      response.writeHead(200, { 'Content-Type': 'application/timestamp-reply' }).end(Buffer.from(answer));
    } catch (error) {
      response.writeHead(400).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/tsa`,
    certificatePem: pem(certificateDer),
    get mode() {
      return state.mode;
    },
    set mode(mode) {
      state.mode = mode;
    },
    get requests() {
      return requests;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Sets the mode of a test TSA running in another process (the shared stack's, test/support/global-setup.ts). */
export async function setTsaMode(tsaUrl: string, mode: TestTsa['mode']): Promise<void> {
  const response = await fetch(new URL('/mode', tsaUrl), { method: 'PUT', body: mode });
  if (response.status !== 204) throw new Error(`the test TSA refused mode ${mode}: ${response.status}`);
}
