/**
 * `export/:key_type/:name(/:version)` encodings (reference transit-wire.md sections 3.3.4 and 5.1) and
 * the version selection shared with byok-export.
 */
import { pqPrivateExport, pqPublicExport } from '../pq/pq-material.js';
import { invalid } from '../../../framework/errors.js';
import { KEY_TYPES } from './key-types.js';
import { chainText } from './key-view.js';
import { publicKeyText } from './material.js';
import type { KeyVersion, TransitKey } from './types.js';

/** Export kinds and whether they need `exportable`. */
export const EXPORT_TYPES: Readonly<Record<string, { private: boolean }>> = {
  'encryption-key': { private: true },
  'signing-key': { private: true },
  'hmac-key': { private: true },
  'public-key': { private: false },
  'certificate-chain': { private: false },
};

/** Versions selected by a `version` path segment: absent = all live, `latest`, `<n>` or `v<n>`. */
export function selectVersions(key: TransitKey, raw: string | undefined): KeyVersion[] {
  if (raw === undefined || raw === '') {
    const out: KeyVersion[] = [];
    for (let n = Math.max(1, key.minDecryptionVersion); n <= key.latestVersion; n++) {
      const v = key.versions.get(n);
      if (v) out.push(v);
    }
    return out;
  }
  let n: number;
  if (raw === 'latest') n = key.latestVersion;
  else {
    const m = /^v?(\d{1,9})$/.exec(raw);
    if (!m) throw invalid('version', 'invalid key version');
    n = Number(m[1]);
  }
  if (n < key.minDecryptionVersion) throw invalid('version', 'version for export is below minimum decryption version');
  const v = key.versions.get(n);
  if (!v) throw invalid('version', 'version does not exist or cannot be found');
  return [v];
}

function trimmedPem(pem: string): string {
  return pem.trim();
}

/** One version's value for an export kind. */
function exportValue(key: TransitKey, kind: string, v: KeyVersion): string {
  const info = KEY_TYPES[key.type];
  switch (kind) {
    case 'hmac-key':
      return v.hmacKey.toString('base64');
    case 'encryption-key':
      if (!info.encrypt) throw invalid('key_type', 'encryption not supported for the key');
      if (info.kind === 'aead') return v.key!.toString('base64');
      // RSA: PKCS#1 PEM with trailing newline; "" for public-only versions.
      return v.privateKey ? String(v.privateKey.export({ format: 'pem', type: 'pkcs1' })) : '';
    case 'signing-key':
      if (!info.sign) throw invalid('key_type', 'signing not supported for the key');
      if (info.kind === 'pqc') return pqPrivateExport(key, v);
      if (key.type === 'ed25519') return v.key ? v.key.toString('base64') : '';
      if (!v.privateKey) return '';
      if (info.curve) return trimmedPem(String(v.privateKey.export({ format: 'pem', type: 'sec1' })));
      return String(v.privateKey.export({ format: 'pem', type: 'pkcs1' }));
    case 'public-key': {
      if (info.kind === 'pqc') return pqPublicExport(key, v);
      if (info.kind !== 'asymmetric')
        throw invalid('key_type', `public-key export is not supported for keys of type ${key.type}`);
      const text = publicKeyText(key.type, v);
      return info.curve ? text.trim() : text;
    }
    case 'certificate-chain':
      if (!info.sign) throw invalid('key_type', 'certificate chain not supported for keys that do not support signing');
      if (!v.certificateChain?.length)
        throw invalid('version', 'selected key version does not have a certificate chain imported');
      return chainText(v);
  }
  throw invalid('key_type', `invalid export type: ${kind}`);
}

/** The export response data `{name, type, keys}`; refusals are 400s naming the cause. */
export function exportKey(key: TransitKey, kind: string, version: string | undefined): Record<string, unknown> {
  const spec = EXPORT_TYPES[kind];
  if (!spec) throw invalid('key_type', `invalid export type: ${kind}`);
  if (spec.private && !key.exportable) throw invalid('exportable', 'private key material is not exportable');
  const keys: Record<string, string> = {};
  for (const v of selectVersions(key, version)) keys[String(v.version)] = exportValue(key, kind, v);
  return { name: key.name, type: key.type, keys };
}
