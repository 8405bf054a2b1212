/**
 * Baseline: a bare node:http server doing the same work as one keyhold transit operation and
 * replying with the same Vault JSON envelope, with no router, token store, ACL or storage. It is
 * what "the limit of this machine" means for one Node process serving that operation.
 *
 * Usage: node bench/baselines/bare-server.js <unix-socket-path | 127.0.0.1:port>
 * It answers keyhold's own paths, so the load generator sends both servers the same requests:
 * POST /v1/transit/{encrypt,decrypt,hmac,verify,datakey/wrapped}/<key>, the op taken from the third
 * path segment by one split (verify is verify-hmac). Prints "ready" when listening.
 */
import { createServer } from 'node:http';
import { createCipheriv, createDecipheriv, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { unlinkSync } from 'node:fs';

const [where] = process.argv.slice(2);
const aesKey = randomBytes(32);
const hmacKey = randomBytes(32);

/** AES-256-GCM with a fresh 96-bit nonce, Vault's layout: nonce || ciphertext || tag. */
function seal(plaintext) {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', aesKey, nonce);
  const ct = Buffer.concat([nonce, c.update(plaintext), c.final(), c.getAuthTag()]);
  return 'vault:v1:' + ct.toString('base64');
}

function open(ciphertext) {
  const raw = Buffer.from(ciphertext.slice(ciphertext.indexOf(':', 6) + 1), 'base64');
  const d = createDecipheriv('aes-256-gcm', aesKey, raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(raw.length - 16));
  return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]);
}

function mac(input) {
  return 'vault:v1:' + createHmac('sha256', hmacKey).update(input).digest('base64');
}

/** One handler per op: parsed JSON body -> response data. */
const OPS = {
  encrypt: (b) => ({ ciphertext: seal(Buffer.from(b.plaintext, 'base64')), key_version: 1 }),
  decrypt: (b) => ({ plaintext: open(b.ciphertext).toString('base64') }),
  hmac: (b) => ({ hmac: mac(Buffer.from(b.input, 'base64')), key_version: 1 }),
  verify: (b) => {
    const want = Buffer.from(mac(Buffer.from(b.input, 'base64')));
    const got = Buffer.from(String(b.hmac));
    return { valid: want.length === got.length && timingSafeEqual(want, got) };
  },
  datakey: () => ({ ciphertext: seal(randomBytes(32)), key_version: 1 }),
};

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let status = 200;
    let body;
    try {
      if (!req.headers['x-vault-token']) throw Object.assign(new Error('missing client token'), { status: 403 });
      const handle = OPS[req.url.split('/')[3]];
      if (!handle) throw Object.assign(new Error('unsupported path'), { status: 404 });
      const data = handle(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      body = JSON.stringify({ request_id: randomUUID(), lease_id: '', renewable: false, lease_duration: 0, data, wrap_info: null, warnings: null, auth: null });
    } catch (e) {
      status = e.status ?? 400;
      body = JSON.stringify({ errors: [e.message] });
    }
    res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });
});

const m = /^(.*):(\d+)$/.exec(where);
if (m) server.listen(Number(m[2]), m[1], () => process.stdout.write('ready\n'));
else {
  try {
    unlinkSync(where);
  } catch {
    /* not there */
  }
  server.listen(where, () => process.stdout.write('ready\n'));
}
process.on('SIGTERM', () => server.close(() => process.exit(0)));
