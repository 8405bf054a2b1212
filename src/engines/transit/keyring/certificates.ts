/**
 * `keys/:name/csr` and `keys/:name/set-certificate` (reference transit-wire.md section 3.2.10): a PKCS#10
 * request signed by a key version (the template's subject and attributes kept, its key replaced), and a
 * certificate chain whose leaf must carry the version's public key.
 */
import { X509Certificate, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { invalid } from '../../../framework/errors.js';
import { DER_NULL, bitString, children, oid, pemBlocks, readTlv, seq, smallInt, tlv, toPem } from './der.js';
import { KEY_TYPES } from './key-types.js';
import type { KeyVersion, TransitKey } from './types.js';

/** Signature algorithm per key type (Go's x509 defaults: SHA-256/384/512 by curve, PKCS#1 v1.5 SHA-256 for RSA). */
const SIGNATURE_ALGS: Record<string, { oid: string; hash: string | null; nullParams: boolean }> = {
  'ecdsa-p256': { oid: '1.2.840.10045.4.3.2', hash: 'sha256', nullParams: false },
  'ecdsa-p384': { oid: '1.2.840.10045.4.3.3', hash: 'sha384', nullParams: false },
  'ecdsa-p521': { oid: '1.2.840.10045.4.3.4', hash: 'sha512', nullParams: false },
  ed25519: { oid: '1.3.101.112', hash: null, nullParams: false },
  rsa: { oid: '1.2.840.113549.1.1.11', hash: 'sha256', nullParams: true },
};

/** The version a `version` field selects: empty/`latest` = latest; must exist. */
export function pickVersion(key: TransitKey, raw: string | number | undefined): KeyVersion {
  let n = key.latestVersion;
  if (raw !== undefined && raw !== '' && raw !== 'latest') {
    const m = /^v?(\d{1,9})$/.exec(String(raw));
    if (!m) throw invalid('version', `invalid key version "${String(raw).slice(0, 32)}": give a number or "latest"`);
    n = Number(m[1]);
  }
  const v = key.versions.get(n);
  if (!v) throw invalid('version', `version ${n} does not exist`);
  return v;
}

function checkSigningKey(key: TransitKey): void {
  if (!KEY_TYPES[key.type].sign) throw invalid('name', `key type '${key.type}' does not support signing`);
  if (KEY_TYPES[key.type].kind === 'pqc')
    throw invalid(
      'name',
      `CSRs and certificate chains are not supported for ${key.type} keys (keyhold has no X.509 profile for them yet)`,
    );
  if (key.derived) throw invalid('name', 'operation not supported on keys with derivation enabled');
}

/** Build and sign a PKCS#10 request (PEM `CERTIFICATE REQUEST`), keeping a template's subject and attributes. */
export function signCsr(key: TransitKey, v: KeyVersion, templatePem: string | undefined): string {
  checkSigningKey(key);
  if (!v.privateKey || !v.publicKey) throw invalid('version', 'private key not imported for key version selected');
  let subject = seq();
  let attributes = tlv(0xa0, Buffer.alloc(0));
  if (templatePem && templatePem.trim() !== '') {
    const block = pemBlocks(templatePem).find(
      (b) => b.label === 'CERTIFICATE REQUEST' || b.label === 'NEW CERTIFICATE REQUEST',
    );
    if (!block) throw invalid('csr', 'could not decode PEM certificate request');
    try {
      const info = children(readTlv(children(readTlv(block.der).content)[0]!.raw).content);
      subject = info[1]!.raw;
      const attrs = info.find((t) => t.tag === 0xa0);
      if (attrs) attributes = attrs.raw;
    } catch {
      throw invalid('csr', 'could not parse the certificate request template');
    }
  }
  const spki = Buffer.from(v.publicKey.export({ format: 'der', type: 'spki' }));
  const info = seq(smallInt(0), subject, spki, attributes);
  const alg = SIGNATURE_ALGS[key.type] ?? SIGNATURE_ALGS.rsa!;
  const algId = alg.nullParams ? seq(oid(alg.oid), DER_NULL) : seq(oid(alg.oid));
  const signature = sign(alg.hash, info, v.privateKey);
  return toPem('CERTIFICATE REQUEST', seq(info, algId, bitString(signature)));
}

function sameKey(a: KeyObject, b: KeyObject): boolean {
  return Buffer.from(a.export({ format: 'der', type: 'spki' })).equals(
    Buffer.from(b.export({ format: 'der', type: 'spki' })),
  );
}

/** Validate a PEM chain for a version and return its blocks (leaf first); 400 naming the rule broken. */
export function checkCertificateChain(key: TransitKey, v: KeyVersion, chainPem: string): string[] {
  checkSigningKey(key);
  const certs = pemBlocks(chainPem).filter((b) => b.label === 'CERTIFICATE');
  if (certs.length === 0) throw invalid('certificate_chain', 'no PEM CERTIFICATE blocks found');
  let parsed: X509Certificate[];
  try {
    parsed = certs.map((c) => new X509Certificate(c.der));
  } catch {
    throw invalid('certificate_chain', 'could not parse a certificate of the chain');
  }
  const leaves = parsed.filter((c) => !c.ca);
  if (parsed[0]!.ca) {
    throw invalid(
      'certificate_chain',
      leaves.length
        ? 'leaf certificate not found in the first position of the certificate chain'
        : 'certificate in the first position is not a leaf certificate',
    );
  }
  if (leaves.length > 1)
    throw invalid('certificate_chain', 'provided certificate chain contains more than one leaf certificate');
  const leafKey = parsed[0]!.publicKey;
  const pub = v.publicKey ?? (v.privateKey ? createPublicKey(v.privateKey) : undefined);
  if (!pub || !sameKey(leafKey, pub)) {
    throw invalid(
      'certificate_chain',
      `provided leaf certificate public key does not match the public key of version ${v.version} of key ${key.name} (type ${key.type})`,
    );
  }
  return certs.map((c) => toPem('CERTIFICATE', c.der));
}
