#!/usr/bin/env node
/**
 * Baseline of the managed-key cases: the same PKCS#11 calls keyhold makes per request, in a loop in
 * one process, on one logged-in session (pkcs11js, synchronous calls). Input (stdin, JSON):
 * `{module, token, pin, label, op: "sign"|"encrypt", warmupSec, durationSec}`; SOFTHSM2_CONF comes
 * from the environment. Output (stdout, JSON): `{ops, seconds, rate}`.
 *   sign:    SHA-256 of the 64-byte input, C_SignInit(CKM_RSA_PKCS) + C_Sign over DigestInfo||digest
 *   encrypt: C_GenerateRandom (12-byte IV), C_EncryptInit(CKM_AES_GCM, 128-bit tag) + C_Encrypt
 */
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const spec = JSON.parse(readFileSync(0, 'utf8'));
const pkcs11js = createRequire(import.meta.url)('pkcs11js');
const p = new pkcs11js.PKCS11();
p.load(spec.module);
p.C_Initialize({ flags: 2 });
const slot = p.C_GetSlotList(true).find((s) => String(p.C_GetTokenInfo(s).label).trim() === spec.token);
if (!slot) throw new Error(`no token ${spec.token}`);
const s = p.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
p.C_Login(s, 1, spec.pin);
p.C_FindObjectsInit(s, [
  { type: pkcs11js.CKA_LABEL, value: spec.label },
  { type: pkcs11js.CKA_CLASS, value: spec.op === 'sign' ? pkcs11js.CKO_PRIVATE_KEY : pkcs11js.CKO_SECRET_KEY },
]);
const [key] = p.C_FindObjects(s, 1);
p.C_FindObjectsFinal(s);
if (!key) throw new Error(`no key ${spec.label}`);
const input = randomBytes(64);
const DI = Buffer.from('3031300d060960864801650304020105000420', 'hex');
const out = Buffer.alloc(512);
function once() {
  if (spec.op === 'sign') {
    const digest = createHash('sha256').update(input).digest();
    p.C_SignInit(s, { mechanism: 0x0001 }, key);
    p.C_Sign(s, Buffer.concat([DI, digest]), out);
  } else {
    const iv = p.C_GenerateRandom(s, Buffer.alloc(12));
    p.C_EncryptInit(s, { mechanism: 0x1087, parameter: { type: 25, iv, ivBits: 96, tagBits: 128 } }, key);
    p.C_Encrypt(s, input, out);
  }
}
const run = (sec) => {
  const end = performance.now() + sec * 1000;
  let n = 0;
  const t0 = performance.now();
  while (performance.now() < end) {
    once();
    n++;
  }
  return { ops: n, seconds: (performance.now() - t0) / 1000 };
};
run(spec.warmupSec);
const r = run(spec.durationSec);
p.C_Logout(s);
p.C_CloseSession(s);
p.C_Finalize();
process.stdout.write(JSON.stringify({ ...r, rate: r.ops / r.seconds }) + '\n');
