/**
 * Test support: a small PKI made with @peculiar/x509 (an implementation independent of keyhold's
 * DER reading): CAs, intermediates, client and server certificates (valid, expired, with SANs, OUs
 * and extensions), and CRLs, written as PEM files.
 */
import { webcrypto } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadX509 } from '../unit/transit-keys/helpers.js';

type X509 = Awaited<ReturnType<typeof loadX509>>;
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY = 86_400_000;

/** A certificate with its key, as PEM text and as files. */
export interface Issued {
  cert: string;
  key: string;
  certFile: string;
  keyFile: string;
  /** Hex serial number. */
  serial: string;
  keys: CryptoKeyPair;
  name: string;
}

/** What a new certificate may say. */
export interface CertSpec {
  name: string;
  ca?: boolean;
  /** Issuer; self-signed when absent. */
  issuer?: Issued;
  notBefore?: Date;
  notAfter?: Date;
  dns?: string[];
  emails?: string[];
  uris?: string[];
  ips?: string[];
  /** Extended key usages (OIDs); none when absent. */
  eku?: string[];
  /** Extra extensions: OID -> UTF8String value. */
  extensions?: Record<string, string>;
}

let serialSeq = 0x1000;

/** A PKI writing its files into `dir`. */
export class TestPki {
  private x509!: X509;
  constructor(readonly dir: string) {}

  async init(): Promise<this> {
    this.x509 = await loadX509();
    return this;
  }

  /** Issue a certificate per `spec`. */
  async issue(spec: CertSpec): Promise<Issued> {
    const x = this.x509;
    const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as unknown as CryptoKeyPair;
    const serial = (serialSeq++).toString(16);
    const exts: InstanceType<X509['Extension']>[] = [];
    if (spec.ca)
      exts.push(
        new x.BasicConstraintsExtension(true, undefined, true),
        new x.KeyUsagesExtension(x.KeyUsageFlags.keyCertSign | x.KeyUsageFlags.cRLSign, true),
      );
    else exts.push(new x.BasicConstraintsExtension(false, undefined, true));
    const sans = [
      ...(spec.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
      ...(spec.emails ?? []).map((value) => ({ type: 'email' as const, value })),
      ...(spec.uris ?? []).map((value) => ({ type: 'url' as const, value })),
      ...(spec.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
    ];
    if (sans.length) exts.push(new x.SubjectAlternativeNameExtension(sans));
    if (spec.eku) exts.push(new x.ExtendedKeyUsageExtension(spec.eku));
    exts.push(await x.SubjectKeyIdentifierExtension.create(keys.publicKey));
    for (const [oid, value] of Object.entries(spec.extensions ?? {})) {
      const v = Buffer.from(value, 'utf8');
      exts.push(new x.Extension(oid, false, Buffer.concat([Buffer.from([0x0c, v.length]), v])));
    }
    const notBefore = spec.notBefore ?? new Date(Date.now() - DAY);
    const notAfter = spec.notAfter ?? new Date(Date.now() + 30 * DAY);
    const cert = spec.issuer
      ? await x.X509CertificateGenerator.create({
          serialNumber: serial,
          subject: spec.name,
          issuer: new x.X509Certificate(spec.issuer.cert).subject,
          notBefore,
          notAfter,
          signingAlgorithm: ALG,
          publicKey: keys.publicKey,
          signingKey: spec.issuer.keys.privateKey,
          extensions: exts,
        })
      : await x.X509CertificateGenerator.createSelfSigned({
          serialNumber: serial,
          name: spec.name,
          notBefore,
          notAfter,
          signingAlgorithm: ALG,
          keys,
          extensions: exts,
        });
    const pkcs8 = Buffer.from(
      await webcrypto.subtle.exportKey('pkcs8', keys.privateKey as unknown as webcrypto.CryptoKey),
    );
    const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END PRIVATE KEY-----\n`;
    const base = spec.name.replace(/[^A-Za-z0-9]+/g, '_');
    const certFile = join(this.dir, `${base}-${serial}.pem`);
    const keyFile = join(this.dir, `${base}-${serial}-key.pem`);
    const pem = cert.toString('pem');
    writeFileSync(certFile, pem + '\n');
    writeFileSync(keyFile, key, { mode: 0o600 });
    return { cert: pem, key, certFile, keyFile, serial, keys, name: spec.name };
  }

  /** A CRL by `ca` revoking `serials` (hex). */
  async crl(ca: Issued, serials: string[]): Promise<string> {
    const x = this.x509;
    const crl = await x.X509CrlGenerator.create({
      issuer: new x.X509Certificate(ca.cert).subject,
      thisUpdate: new Date(Date.now() - 60_000),
      nextUpdate: new Date(Date.now() + DAY),
      signingAlgorithm: ALG,
      signingKey: ca.keys.privateKey,
      entries: serials.map((serialNumber) => ({ serialNumber, revocationDate: new Date(Date.now() - 60_000) })),
    });
    return crl.toString('pem');
  }
}
