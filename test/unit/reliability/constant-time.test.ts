import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const SRC = join(import.meta.dirname, '..', '..', '..', 'src');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

// Comparisons of public data that look like secret comparisons by name (reviewed).
const REVIEWED = [
  /certificates\.ts: .*export\(\{ format: 'der', type: 'spki' \}\)\)\.equals/, // public keys
  /key-io-routes\.ts: .*publicKey\.export\(\{ format: 'der', type: 'spki' \}\)\)\.equals/, // public keys
  /envelope\.ts: .*\.equals\(ENVELOPE_MAGIC\)/, // file-format magic bytes
  /cli\/commands\/transit-data\.ts: .*!o\.signature === !o\.hmac/, // flag presence
  /auth\/policies\.ts: .*Buffer\.from\(s, 'utf8'\)\.equals\(buf\)/, // a policy body's base64 round trip (policy text is not secret)
  /storage\/file-format\.ts: .*createHash\('sha256'\)\.update\(buf\.subarray\(start, end\)\)\.digest\(\)\.subarray\(0, 16\)\.equals/, // a storage frame's integrity checksum against the frame read back (no secret: the frame sits on disk next to it)
  /storage\/file-format\.ts: \.equals\(buf\.subarray\(at \+ 8, at \+ 24\)\)$/, // the same checksum comparison as the formatter wraps it (the chain split over lines)
  /engines\/cert\/cert-der\.ts: .*\.tag (===|!==) (SEQ|OID|BOOL|OCTETS|INTEGER)\b/, // DER tag bytes of a certificate or CRL (public structure)
  /engines\/cert\/client-chain\.ts: .*\.raw\.equals\(/, // a certificate's DER against a trust anchor's or a chain member's (certificates are public)
  /server\/forwarded-cert\.ts: .*o\.equals\(raw\)/, // a certificate's DER against its chain's (a self-signed certificate is its own issuer; certificates are public)
  /storage\/snapshot\.ts: .*\.equals\(MANIFEST_MAGIC\)/, // the snapshot format's magic bytes
  /storage\/snapshot\.ts: if \(manifest\.records_sha256 !== recHash\.digest\('hex'\)\)/, // a snapshot's integrity checksum over its own (barrier-encrypted) records: no secret involved
  /agent\/template\/values\.ts: return Buffer\.compare\(x, y\);/, // Go's byte order of template strings (sorting map keys, not a secret check)
  /kms\/pkcs11\/pkcs11-key\.ts: .*x\.oid\.equals\(Buffer\.from\((f|this\.facts)\.ecParams/, // a key's CKA_EC_PARAMS curve OID against known curve OIDs (public parameters)
];

describe('secret comparisons are constant time', () => {
  it('no ===, !==, equals() or compare() on MACs, tags, signatures, digests or tokens outside reviewed public-data cases', () => {
    const suspicious =
      /(hmac|mac|signature|digest|tag|token)[A-Za-z_]*(\)|\]|\.[a-zA-Z]+\(\))?\s*(===|!==)\s*[a-z]|(===|!==)\s*[a-z_.]*(hmac|mac|signature|digest|tag|token)\b|\.(equals|compare)\(/i;
    const ignore =
      /typeof|=== undefined|!== undefined|=== null|!== null|\.length|=== '|!== '|=== "|=== 0|hash_algorithm|hashAlgorithm|Kind\b|kind\b|\.type\b/;
    const hits: string[] = [];
    for (const file of sources(SRC)) {
      const rel = relative(SRC, file);
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (line.trim().startsWith('//') || line.trim().startsWith('*')) return;
          if (!suspicious.test(line) || ignore.test(line)) return;
          const where = `${rel}: ${line.trim()}`;
          if (!REVIEWED.some((re) => re.test(where))) hits.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(hits).toEqual([]);
  });

  it('token lookup and HMAC verification use timingSafeEqual', () => {
    expect(readFileSync(join(SRC, 'auth', 'tokens.ts'), 'utf8')).toMatch(/timingSafeEqual\(/);
    expect(readFileSync(join(SRC, 'engines', 'transit', 'ops', 'hmac.ts'), 'utf8')).toMatch(/timingSafeEqual\(/);
  });
});
