/**
 * Baseline: a bare node:http server doing the same work as one keyhold transit operation and
 * replying with the same Vault JSON envelope, with no router, token store, ACL or storage. It is
 * what "the limit of this machine" means for one Node process serving that operation.
 *
 * Usage: node bench/baselines/bare-server.js <unix-socket-path | 127.0.0.1:port>
 * It answers keyhold's own paths, so the load generator sends both servers the same requests:
 * POST /v1/transit/{encrypt,decrypt,hmac,verify,datakey/wrapped}/<key>, the op taken from the third
 * path segment by one split (verify is verify-hmac). Logins (issue 14): POST /v1/auth/approle/login
 * checks the secret id's HMAC like keyhold's AppRole, POST /v1/auth/jwt/login verifies the JWT with
 * jose (RS256, audience, issuer, times) against the key given to POST /v1/auth/jwt/config; both
 * answer a fresh random token in an `auth` block. Prints "ready" when listening.
 */
import { createServer } from 'node:http';
import { createCipheriv, createDecipheriv, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import { jwtVerify } from 'jose';

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

const approleKey = randomBytes(32);
/** Secret ids registered by the bench (HMACs only), as keyhold's AppRole keeps them. */
const secretIds = new Set();
let jwtKey = null;

function newAuth(policies, metadata) {
  return {
    client_token: 'hvs.' + randomBytes(18).toString('base64url'),
    accessor: randomBytes(12).toString('base64url'),
    policies,
    token_policies: policies,
    metadata,
    lease_duration: 600,
    renewable: true,
    entity_id: randomUUID(),
    token_type: 'service',
    orphan: true,
    mfa_requirement: null,
    num_uses: 0,
  };
}

/** Login handlers: parsed JSON body and path -> { auth }. */
const LOGINS = {
  approle: (b, path) => {
    const h = createHmac('sha256', approleKey).update(String(b.secret_id)).digest('hex');
    if (path.endsWith('/register')) {
      secretIds.add(h);
      return {};
    }
    if (!secretIds.has(h)) throw Object.assign(new Error('invalid role or secret ID'), { status: 400 });
    return { auth: newAuth(['default', 'bench'], { role_name: 'bench' }) };
  },
  jwt: async (b, path) => {
    if (path.endsWith('/config')) {
      jwtKey = createPublicKey(b.jwt_validation_pubkeys[0]);
      return {};
    }
    const { payload } = await jwtVerify(String(b.jwt), jwtKey, {
      algorithms: ['RS256'],
      audience: 'bench',
      issuer: 'bench-issuer',
      clockTolerance: 60,
    });
    return { auth: newAuth(['default', 'bench'], { repository: String(payload.repository), role: 'ci' }) };
  },
};

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
  req.on('end', async () => {
    let status = 200;
    let body;
    try {
      const parts = req.url.split('/');
      if (parts[2] === 'auth' && LOGINS[parts[3]]) {
        const r = await LOGINS[parts[3]](JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'), req.url);
        body = JSON.stringify({
          request_id: randomUUID(),
          lease_id: '',
          renewable: false,
          lease_duration: 0,
          data: null,
          wrap_info: null,
          warnings: null,
          auth: r.auth ?? null,
        });
        res.writeHead(200, {
          'Content-Type': 'application/json',
          'Cache-Control': 'no-store',
          'Content-Length': Buffer.byteLength(body),
        });
        res.end(body);
        return;
      }
      if (!req.headers['x-vault-token']) throw Object.assign(new Error('missing client token'), { status: 403 });
      const handle = OPS[req.url.split('/')[3]];
      if (!handle) throw Object.assign(new Error('unsupported path'), { status: 404 });
      const data = handle(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      body = JSON.stringify({
        request_id: randomUUID(),
        lease_id: '',
        renewable: false,
        lease_duration: 0,
        data,
        wrap_info: null,
        warnings: null,
        auth: null,
      });
    } catch (e) {
      status = e.status ?? 400;
      body = JSON.stringify({ errors: [e.message] });
    }
    res.writeHead(status, {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      'Content-Length': Buffer.byteLength(body),
    });
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
