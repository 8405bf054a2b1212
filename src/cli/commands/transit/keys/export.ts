/** `keyhold transit keys export KIND NAME [VERSION]`: key material, public keys (also JWK/JWKS/PEM), chains. */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { flag, optArg, type CommandSpec, type Invocation } from '../../../command.js';
import { LocalError } from '../../../errors.js';
import { publicJwk } from '../../../../engines/transit/ops/jwt.js';
import { MOUNT, mountOf } from '../io.js';
import { emit, enc } from './output.js';

/** A public key as exported (PEM, or base64 raw for ed25519) to a KeyObject. */
function publicKeyObject(text: string): KeyObject {
  if (text.includes('-----BEGIN')) return createPublicKey(text);
  return createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(text, 'base64').toString('base64url') },
    format: 'jwk',
  });
}

/** `export public-key NAME [VERSION] --format jwk|jwks|pem`: text for stdout or --output. */
async function publicKeyAs(
  inv: Invocation,
  name: string,
  version: string | undefined,
  format: 'jwk' | 'jwks' | 'pem',
): Promise<string> {
  if (format === 'jwks' && !version) {
    // The server's JWK Set: exactly what relying parties fetch from jwks/NAME.
    const res = await inv.client.request('GET', `${mountOf(inv)}/jwks/${enc(name)}`);
    return JSON.stringify(res.body, null, 2) + '\n';
  }
  const res = await inv.client.request(
    'GET',
    `${mountOf(inv)}/export/public-key/${enc(name)}/${enc(version ?? 'latest')}`,
  );
  const keys = ((res.body?.data as { keys?: Record<string, string> } | undefined)?.keys ?? {}) as Record<
    string,
    string
  >;
  const text = Object.values(keys)[0];
  if (!text) throw new LocalError(`key ${name} has no public key for version ${version ?? 'latest'}`);
  const pub = publicKeyObject(text);
  if (format === 'pem') return String(pub.export({ format: 'pem', type: 'spki' }));
  const jwk = publicJwk(pub);
  return JSON.stringify(format === 'jwk' ? jwk : { keys: [jwk] }, null, 2) + '\n';
}

export const exportKey: CommandSpec = {
  words: ['transit', 'keys', 'export'],
  summary: 'Export key material (exportable keys) or public keys / certificate chains',
  args: [
    { name: 'kind', help: 'encryption-key, signing-key, hmac-key, public-key or certificate-chain' },
    { name: 'name', help: 'key name' },
    optArg('version', 'a version number or "latest" (default: all live versions)'),
  ],
  flags: [MOUNT, flag('--output <file>', 'write the JSON export to this file (mode 0600) instead of stdout')],
  notes:
    'public-key also prints with --format jwk (one version, default latest), jwks (the JWK Set of jwks/NAME, or one version) or pem.',
  examples: [
    'keyhold transit keys export encryption-key payments latest --field keys',
    'keyhold transit keys export public-key signer --output signer-public.json',
    'keyhold transit keys export public-key issuer --format jwks',
  ],
  async run(inv) {
    const { kind, name, version } = inv.args as { kind: string; name: string; version?: string };
    const out = inv.opts.output as string | undefined;
    const format = inv.globals.format;
    if (format === 'jwk' || format === 'jwks' || format === 'pem') {
      if (kind !== 'public-key') throw new LocalError(`--format ${format} applies to public-key exports only`);
      const text = await publicKeyAs(inv, name, version, format);
      if (out) emit(inv, text, out, 'Export');
      else inv.io.stdout.write(text);
      return;
    }
    const res = await inv.client.request(
      'GET',
      `${mountOf(inv)}/export/${enc(kind)}/${enc(name)}${version ? '/' + enc(version) : ''}`,
    );
    const data = res.body?.data ?? null;
    if (out) emit(inv, JSON.stringify(data, null, 2) + '\n', out, 'Export');
    else await inv.print(data);
  },
};
