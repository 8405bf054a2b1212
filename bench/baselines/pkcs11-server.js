#!/usr/bin/env node
/**
 * Baseline of the managed-key cases (issue 32 part 5): a bare node:http server making the same
 * PKCS#11 calls keyhold makes per request, so the HTTP cost every other case's baseline includes is
 * in this one too. No router, token store, ACL or storage; one process, synchronous pkcs11js calls
 * in-process on one logged-in session per key (faster here than a worker thread: SoftHSM2's calls
 * take microseconds, a thread hop costs more). It answers keyhold's paths with Vault's envelope:
 *   POST /v1/transit/encrypt/<key>  C_GenerateRandom (12-byte IV), C_EncryptInit(CKM_AES_GCM) + C_Encrypt
 *   POST /v1/transit/sign/<key>     SHA-256 of the input, C_SignInit(CKM_RSA_PKCS) + C_Sign(DigestInfo||digest)
 * Usage: node bench/baselines/pkcs11-server.js <unix-socket-path>; stdin (JSON): {module, token, pin,
 * keys: {<path key>: <CKA_LABEL>}}; SOFTHSM2_CONF from the environment. Prints "ready" when listening.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { readFileSync, unlinkSync } from 'node:fs';

const [where] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(0, 'utf8'));
const pkcs11js = createRequire(import.meta.url)('pkcs11js');
const p = new pkcs11js.PKCS11();
p.load(spec.module);
p.C_Initialize({ flags: 2 });
const slot = p.C_GetSlotList(true).find((s) => String(p.C_GetTokenInfo(s).label).trim() === spec.token);
if (!slot) throw new Error(`no token ${spec.token}`);
const session = p.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
p.C_Login(session, 1, spec.pin);

function find(label, cls) {
  p.C_FindObjectsInit(session, [
    { type: pkcs11js.CKA_LABEL, value: label },
    { type: pkcs11js.CKA_CLASS, value: cls },
  ]);
  const [h] = p.C_FindObjects(session, 1);
  p.C_FindObjectsFinal(session);
  return h;
}
const keys = {};
for (const [name, label] of Object.entries(spec.keys)) {
  keys[name] = { secret: find(label, pkcs11js.CKO_SECRET_KEY), private: find(label, pkcs11js.CKO_PRIVATE_KEY) };
}
const DI = Buffer.from('3031300d060960864801650304020105000420', 'hex');
const out = Buffer.alloc(1024);

function encrypt(k, plaintext) {
  const iv = p.C_GenerateRandom(session, Buffer.alloc(12));
  p.C_EncryptInit(session, { mechanism: 0x1087, parameter: { type: 25, iv, ivBits: 96, tagBits: 128 } }, k.secret);
  const ct = p.C_Encrypt(session, plaintext, out);
  return { ciphertext: 'vault:v1:' + Buffer.concat([iv, ct]).toString('base64'), key_version: 1 };
}

function sign(k, input) {
  const digest = createHash('sha256').update(input).digest();
  p.C_SignInit(session, { mechanism: 0x0001 }, k.private);
  const sig = p.C_Sign(session, Buffer.concat([DI, digest]), out);
  return { signature: 'vault:v1:' + Buffer.from(sig).toString('base64'), key_version: 1 };
}

function reply(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      const [, , , op, name] = req.url.split('/');
      const k = keys[name];
      if (!k) return reply(res, 404, { errors: [] });
      const b = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      let data;
      if (op === 'encrypt') data = encrypt(k, Buffer.from(b.plaintext, 'base64'));
      else if (op === 'sign') data = sign(k, Buffer.from(b.input, 'base64'));
      else return reply(res, 404, { errors: [] });
      reply(res, 200, {
        request_id: '',
        lease_id: '',
        renewable: false,
        lease_duration: 0,
        data,
        wrap_info: null,
        warnings: null,
        auth: null,
      });
    } catch (e) {
      reply(res, 500, { errors: [String(e.message)] });
    }
  });
});
try {
  unlinkSync(where);
} catch {
  /* not there */
}
server.listen(where, () => process.stdout.write('ready\n'));
const stop = () => {
  server.close();
  try {
    p.C_Logout(session);
    p.C_CloseSession(session);
    p.C_Finalize();
  } catch {
    /* exiting */
  }
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
