/**
 * Fuzz support: fast-check arbitraries that turn the route tables into hostile HTTP requests (random
 * methods, path parameters, field types, sizes, encodings, raw bodies), and the judgement of an answer.
 */
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import type { AnyRoute } from '../../src/framework/route.js';
import type { Field } from '../../src/framework/fields.js';

/** A route reachable under a mount path. */
export interface Target {
  mount: string;
  route: AnyRoute;
}

/** One generated request. */
export interface FuzzCase {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** Which route it was built from (for the report). */
  template: string;
}

/** Names that exist in the fuzzed daemon, so cases reach deep into handlers. */
export const KNOWN = ['fz', 'fz-ed', 'fz-hmac', 'fz-derived', 'fz/s', 'fz'];

const hostileSegments = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E%2F..',
  'a%2Fb',
  '%00',
  '%zz',
  '%',
  'x'.repeat(300),
  '~',
  '*',
  '%ff%fe',
  '..%2f..%2fetc',
  'null',
  '0',
  '-1',
  '1e3',
  '%20',
];

const segment: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KNOWN.filter((k) => !k.includes('/'))) },
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z0-9_.-]{1,24}$/) },
  { weight: 2, arbitrary: fc.constantFrom(...hostileSegments) },
  {
    weight: 2,
    arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }).map((s) => encodeURIComponent(s)),
  },
  { weight: 1, arbitrary: fc.integer({ min: -10, max: 2 ** 31 }).map(String) },
);

const rest: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.array(segment, { minLength: 1, maxLength: 4 }).map((xs) => xs.join('/')) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('fz/s', '../../../../etc/passwd', 'a/./b', 'a//b', 'a/b/', '%2e%2e/%2e%2e/x', 'x/..'),
  },
);

type Item = { lit: string } | { param: string; rest: boolean } | { opt: Item[] };

function parseTemplate(t: string): Item[] {
  const stack: Item[][] = [[]];
  for (let i = 0; i < t.length; i++) {
    const c = t[i]!;
    if (c === '(') stack.push([]);
    else if (c === ')') {
      const inner = stack.pop()!;
      stack.at(-1)!.push({ opt: inner });
    } else if (c === ':' || c === '*') {
      let j = i + 1;
      while (j < t.length && /\w/.test(t[j]!)) j++;
      stack.at(-1)!.push({ param: t.slice(i + 1, j), rest: c === '*' });
      i = j - 1;
    } else stack.at(-1)!.push({ lit: c });
  }
  return stack[0]!;
}

function itemsArb(items: Item[]): fc.Arbitrary<string> {
  if (items.length === 0) return fc.constant('');
  return fc
    .tuple(
      ...items.map((it): fc.Arbitrary<string> => {
        if ('lit' in it) return fc.constant(it.lit);
        if ('param' in it) return it.rest ? rest : segment;
        return fc.option(itemsArb(it.opt), { nil: undefined }).map((s) => s ?? '');
      }),
    )
    .map((parts) => parts.join(''));
}

/** A path under the mount for a route template, with random parameters. */
export function pathArb(t: Target): fc.Arbitrary<string> {
  // Whatever the generator produced, the request line itself stays valid HTTP (hostility is in the encoding).
  return itemsArb(parseTemplate(t.route.path)).map(
    (p) => t.mount + p.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c)),
  );
}

const b64 = fc.uint8Array({ maxLength: 64 }).map((u) => Buffer.from(u).toString('base64'));
const hostileStrings = fc.constantFrom(
  '',
  ' ',
  '!!!not base64!!!',
  'YWJj=',
  '====',
  'vault:v1:',
  'vault:v1:AAAA',
  'vault:v99999999999:AAAA',
  'vault:v-1:AAAA',
  'vault:vX:AAAA',
  'vault:v1',
  '\u0000',
  '\uffff\ud800',
  '{"a":1}',
  '[1,2]',
  'true',
  '-1',
  '1e999',
  '9'.repeat(40),
  '1h',
  '-5s',
  'P1D',
  'sha2-256',
  'rsa-2048',
  'aes256-gcm96',
  'ed25519',
  'hmac',
);
/** Ciphertexts that cannot be authentic: random payloads, truncations, wrong versions. */
export const forgedCiphertext = fc.oneof(
  fc
    .tuple(fc.integer({ min: 0, max: 5 }), fc.uint8Array({ minLength: 0, maxLength: 80 }))
    .map(([v, u]) => `vault:v${v}:${Buffer.from(u).toString('base64')}`),
  fc.constantFrom(
    'vault:v1:',
    'vault:v1:AA==',
    'vault:v1:' + 'A'.repeat(40),
    'vault:v1:' + Buffer.alloc(12).toString('base64'),
  ),
);
const hugeString = fc.constantFrom(
  'A'.repeat(70_000),
  'é'.repeat(40_000),
  Buffer.alloc(200_000, 0x41).toString('base64'),
);

function kindArb(field: Field<unknown, boolean>): fc.Arbitrary<unknown> {
  const spec = field.spec;
  const choices = spec.choices?.length
    ? fc.constantFrom(...spec.choices.map((c) => (c.startsWith('rsa-') ? 'rsa-2048' : c)))
    : null;
  const valid: Record<string, fc.Arbitrary<unknown>> = {
    string: choices ?? fc.oneof(fc.string({ maxLength: 40 }), hostileStrings),
    int: fc.oneof(fc.integer({ min: -3, max: 40 }), fc.constantFrom(2 ** 53, -(2 ** 53), 1e308, 0.5, '7', 'x')),
    bool: fc.oneof(fc.boolean(), fc.constantFrom('true', 'false', 'yes', '2', 1, 0)),
    duration: fc.oneof(fc.constantFrom('0', '1h', '30m', '-1h', '99999999999h', 'forever', 3600, -1, 1e20)),
    strings: fc.oneof(fc.array(fc.string({ maxLength: 10 }), { maxLength: 5 }), fc.string({ maxLength: 20 })),
    ints: fc.oneof(fc.array(fc.integer({ min: -2, max: 20 }), { maxLength: 5 }), fc.constantFrom('1,2,3', 'a,b')),
    map: fc.oneof(
      fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
      fc.constantFrom('{"a":"b"}', '{bad'),
    ),
    stringMap: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer())),
    list: fc.array(
      fc.oneof(
        fc.dictionary(
          fc.constantFrom(
            'plaintext',
            'ciphertext',
            'input',
            'context',
            'nonce',
            'reference',
            'key_version',
            'hmac',
            'signature',
          ),
          fc.oneof(b64, hostileStrings, forgedCiphertext, fc.integer()),
        ),
        fc.jsonValue({ maxDepth: 2 }),
      ),
      { maxLength: 6 },
    ),
    base64: fc.oneof(b64, hostileStrings),
    any: fc.jsonValue({ maxDepth: 3 }),
  };
  return fc.oneof(
    { weight: 5, arbitrary: valid[spec.kind] ?? fc.jsonValue() },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 1, arbitrary: hugeString },
  );
}

/** A JSON body built from the route's declared fields (some wrong, some unknown). */
function fieldsBodyArb(route: AnyRoute): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(route.fields).map(([name, field]) => {
    let arb = kindArb(field as Field<unknown, boolean>);
    if (name === 'ciphertext') arb = fc.oneof(forgedCiphertext, arb);
    return fc.option(arb, { nil: undefined }).map((v) => [name, v] as const);
  });
  const extra = fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), {
    maxKeys: 3,
  });
  return fc
    .tuple(fc.tuple(...(entries.length ? entries : [fc.constant(['_', undefined] as const)])), extra)
    .map(([fs, ex]) => {
      const out: Record<string, unknown> = { ...ex };
      for (const [k, v] of fs) if (v !== undefined) out[k] = v;
      return out;
    });
}

/** Raw bodies no well-behaved client sends. */
const rawBodyArb: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((u) => Buffer.from(u)), // invalid UTF-8 and binary
  fc.constantFrom(
    Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]), // {"a":"<invalid UTF-8>"}
    Buffer.from('{"plaintext":"aGk=",'),
    Buffer.from('['.repeat(600) + ']'.repeat(600)),
    Buffer.from('{"a":'.repeat(520) + '1' + '}'.repeat(520)),
    Buffer.from('{"a":[' + '0,'.repeat(10_500) + '0]}'),
    Buffer.from('{' + Array.from({ length: 10_100 }, (_, i) => `"k${i}":0`).join(',') + '}'),
    Buffer.from('{"a":"' + 'x'.repeat(1024 * 1024 + 10) + '"}'),
    Buffer.from('[1,2,3]'),
    Buffer.from('"just a string"'),
    Buffer.from('null'),
    Buffer.from('plaintext=aGk%3D&key_version=1'),
    Buffer.from('a=%zz&b'),
    Buffer.from('\uFEFF{"a":1}'),
    Buffer.from('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}'),
  ),
  fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v))),
);

const methodArb = fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'LIST', 'PATCH', 'GET', 'POST', 'POST');

const OP_METHOD: Record<string, string> = {
  read: 'GET',
  list: 'LIST',
  update: 'POST',
  create: 'PUT',
  delete: 'DELETE',
  patch: 'PATCH',
};

/** A method the route serves (most cases should reach a handler, not stop at 405). */
function supportedMethod(route: AnyRoute): fc.Arbitrary<string> {
  const ms = Object.keys(route.operations)
    .map((op) => OP_METHOD[op]!)
    .filter(Boolean);
  return ms.length ? fc.constantFrom(...ms) : methodArb;
}

/** Whether a (route, method) may be fuzzed: nothing that ends the session or reaches outside 127.0.0.1. */
export function allowed(t: Target, method: string): boolean {
  const p = t.mount + t.route.path;
  if (p === 'sys/seal' || p.includes('revoke-self')) return false; // would end the fuzz session (tested elsewhere)
  if (p === 'sys/audit/*path' && method !== 'GET' && method !== 'LIST' && method !== 'DELETE') return false; // would create files at random paths
  // Sync writes could create destinations that push to real provider endpoints; reads and deletes only.
  if (t.mount === 'sys/sync/' && !['GET', 'LIST', 'DELETE'].includes(method) && p !== 'sys/sync/config') return false;
  return true;
}

/** A random case over the given targets. */
export function caseArb(targets: Target[]): fc.Arbitrary<FuzzCase> {
  return fc
    .constantFrom(...targets)
    .chain((t) =>
      fc.tuple(
        fc.constant(t),
        fc.oneof({ weight: 3, arbitrary: supportedMethod(t.route) }, { weight: 1, arbitrary: methodArb }),
      ),
    )
    .filter(([t, m]) => allowed(t, m))
    .chain(([t, method]) =>
      fc
        .tuple(
          pathArb(t),
          fc.oneof(
            { weight: 4, arbitrary: fieldsBodyArb(t.route).map((o) => Buffer.from(JSON.stringify(o))) },
            { weight: 1, arbitrary: rawBodyArb },
            { weight: 1, arbitrary: fc.constant(undefined) },
          ),
          fc.constantFrom(
            'application/json',
            'application/merge-patch+json',
            'application/x-www-form-urlencoded',
            'text/plain',
            '',
          ),
          fc.option(fc.constantFrom('?list=true', '?version=1', '?list=maybe', '?version=-1&list=true', '?a=%zz'), {
            nil: '',
          }),
          // Response wrapping on any request (issue 14): valid, zero, negative, huge and garbage TTLs.
          fc.option(fc.constantFrom('60', '5m', '0', '-1', '769h', '1e9', 'soon', '1h30m', ''), {
            nil: undefined,
            freq: 4,
          }),
        )
        .map(([path, body, ct, query, wrapTtl]): FuzzCase => {
          const headers: Record<string, string> = {};
          if (ct)
            headers['Content-Type'] =
              method === 'PATCH' && ct === 'application/json' ? 'application/merge-patch+json' : ct;
          if (wrapTtl !== undefined) headers['X-Vault-Wrap-TTL'] = wrapTtl;
          const c: FuzzCase = {
            method,
            path: path + query,
            headers,
            body: method === 'GET' || method === 'LIST' ? (body && body.length < 100 ? body : undefined) : body,
            template: t.mount + t.route.path,
          };
          // Short form in fast-check reports (bodies can be megabytes).
          Object.defineProperty(c, fc.toStringMethod, { value: () => describeCase(c), enumerable: false });
          return c;
        }),
    );
}

/** One line describing a case, with the body cut short. */
export function describeCase(c: FuzzCase): string {
  const body = c.body
    ? `${c.body.length} bytes: ${JSON.stringify(c.body.subarray(0, 200).toString('utf8'))}`
    : 'no body';
  return `${c.method} /v1/${c.path.slice(0, 300)} ${JSON.stringify(c.headers)} (${body})`;
}

/** Random bytes for raw tests. */
export function noise(n: number): Buffer {
  return randomBytes(n);
}
