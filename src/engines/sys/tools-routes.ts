/**
 * Built-ins the default policy refers to (vault/policy_store.go): `sys/tools/hash`, `sys/tools/random`
 * (vault/logical_system.go pathHashWrite, helper/random HandleRandomAPI), and the lease endpoints
 * `sys/leases/lookup`, `sys/leases/renew`, `sys/renew`, `sys/leases/revoke`. keyhold issues no leases
 * (KV v2 and transit are not leased), so lease ids are always unknown and answered as Vault answers them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

/** Hash algorithms of sys/tools/hash, Vault's names to node:crypto's. */
const HASHES: Record<string, string> = {
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
  'sha3-224': 'sha3-224',
  'sha3-256': 'sha3-256',
  'sha3-384': 'sha3-384',
  'sha3-512': 'sha3-512',
};

/** Vault's cap on sys/tools/random (helper/random: 128 KiB). */
const MAX_RANDOM_BYTES = 128 * 1024;

function encode(buf: Buffer, format: string): string {
  if (format === 'hex') return buf.toString('hex');
  if (format === 'base64') return buf.toString('base64');
  throw invalid(`unsupported encoding format ${format}; must be "hex" or "base64"`);
}

const leaseId = f.string('Lease id');

/** Routes of sys/tools and sys/leases. */
export const toolsRoutes: AnyRoute[] = [
  route({
    path: 'tools/hash(/:urlalgorithm)',
    summary: 'Hash base64 input (sha2-224/256/384/512, sha3-224/256/384/512)',
    fields: {
      urlalgorithm: f.string('Algorithm in the URL'),
      input: f.string('Base64-encoded input').sensitive(),
      algorithm: f.string('Algorithm').default('sha2-256'),
      format: f.string('Output encoding: hex or base64').default('hex'),
    },
    operations: {
      update: ({ data }) => {
        const algorithm = data.urlalgorithm ?? data.algorithm;
        const input = data.input ?? '';
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(input) || input.length % 4 !== 0)
          throw invalid('unable to decode input as base64: illegal base64 data');
        if (data.format !== 'hex' && data.format !== 'base64')
          throw invalid(`unsupported encoding format ${data.format}; must be "hex" or "base64"`);
        const alg = HASHES[algorithm];
        if (!alg) throw invalid(`unsupported algorithm ${algorithm}`);
        return { data: { sum: encode(createHash(alg).update(Buffer.from(input, 'base64')).digest(), data.format) } };
      },
    },
  }),
  route({
    path: 'tools/random(/:source)(/:urlbytes)',
    summary: 'Random bytes from the platform CSPRNG (up to 128 KiB)',
    fields: {
      source: f.string('platform (keyhold has no seal entropy source)'),
      urlbytes: f.string('Byte count in the URL'),
      bytes: f.int('Number of bytes').default(32),
      format: f.string('Output encoding: hex or base64').default('base64'),
    },
    operations: {
      update: ({ data }) => {
        // Vault's parsing (helper/random): a lone URL segment is a source when it names one, else a count.
        let source = 'platform';
        let bytes = data.bytes;
        if (data.source !== undefined && data.urlbytes === undefined) {
          if (['platform', 'seal', 'all'].includes(data.source)) source = data.source;
          else if (/^\d+$/.test(data.source)) bytes = Number(data.source);
          else throw invalid(`error parsing url-set byte count: invalid value "${data.source}"`);
        } else if (data.source !== undefined) {
          source = data.source;
          if (!/^\d+$/.test(data.urlbytes!))
            throw invalid(`error parsing url-set byte count: invalid value "${data.urlbytes}"`);
          bytes = Number(data.urlbytes);
        }
        if (source !== 'platform') throw invalid(`unsupported entropy source ${source}; keyhold offers "platform"`);
        if (bytes < 1) throw invalid('"bytes" cannot be less than 1');
        if (bytes > MAX_RANDOM_BYTES) throw invalid(`"bytes" should be less than ${MAX_RANDOM_BYTES}`);
        if (data.format !== 'hex' && data.format !== 'base64')
          throw invalid(`unsupported encoding format ${data.format}; must be "hex" or "base64"`);
        return { data: { random_bytes: encode(randomBytes(bytes), data.format) } };
      },
    },
  }),
  route({
    path: 'leases/lookup',
    summary: 'Look up a lease (keyhold issues none: every id is "invalid lease")',
    fields: { lease_id: leaseId },
    operations: {
      update: ({ data }) => {
        if (!data.lease_id) throw invalid('lease_id must be specified');
        throw invalid('invalid lease');
      },
    },
  }),
  route({
    path: 'leases/lookup/*prefix',
    summary: 'List lease ids under a prefix (sudo; keyhold has none)',
    fields: { prefix: f.string('Prefix') },
    sudo: true,
    operations: { list: () => undefined },
  }),
  route({
    path: '(leases/)renew(/*url_lease_id)',
    summary: 'Renew a lease (keyhold issues none: "lease not found")',
    fields: {
      lease_id: leaseId,
      url_lease_id: f.string('Lease id in the URL'),
      increment: f.duration('Requested extension'),
    },
    operations: {
      update: ({ data }) => {
        if (!(data.lease_id ?? data.url_lease_id)) throw invalid('lease_id must be specified');
        throw invalid('lease not found');
      },
    },
  }),
  route({
    path: '(leases/)revoke(/*url_lease_id)',
    summary: 'Revoke a lease (an unknown lease is already revoked: 204)',
    fields: {
      lease_id: leaseId,
      url_lease_id: f.string('Lease id in the URL'),
      sync: f.bool('Accepted for compatibility'),
    },
    operations: {
      update: ({ data }) => {
        if (!(data.lease_id ?? data.url_lease_id)) throw invalid('lease_id must be specified');
      },
    },
  }),
];
