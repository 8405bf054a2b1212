/**
 * Baseline: node:crypto in a tight loop in one process, the ceiling for crypto-bound cases.
 *
 * Usage: node bench/baselines/crypto-loop.js <mode> <durationSec> [warmupSec]
 * modes: sign-ed25519, verify-ed25519, sign-ecdsa-p256, verify-ecdsa-p256, sign-rsa-2048,
 * verify-rsa-2048 (64-byte input, Vault's defaults: SHA-256, ASN.1 ECDSA, RSA-PSS with the largest
 * salt), sign-ml-dsa-65, verify-ml-dsa-65 (pure ML-DSA-65 with the implementation keyhold uses on
 * this Node: node:crypto where it has ML-DSA, else @noble/post-quantum; KEYHOLD_PQ_IMPL=noble forces
 * noble on both sides), aes-gcm-items (64-byte items, AES-256-GCM with a fresh 96-bit nonce each).
 * Prints one JSON line {mode, opsPerSec, ops, seconds}.
 */
import { constants, createCipheriv, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js';

const [mode, durationArg, warmupArg] = process.argv.slice(2);
const durationSec = Number(durationArg ?? 5);
const warmupSec = Number(warmupArg ?? 0);
const input = randomBytes(64);

/** Per algorithm: how to make a key pair and the sign/verify calls Vault's defaults imply. */
const SIGNERS = {
  ed25519: {
    keys: () => generateKeyPairSync('ed25519'),
    sign: (k) => sign(null, input, k.privateKey),
    verify: (k, sig) => verify(null, input, k.publicKey, sig),
  },
  'ecdsa-p256': {
    keys: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
    sign: (k) => sign('sha256', input, k.privateKey),
    verify: (k, sig) => verify('sha256', input, k.publicKey, sig),
  },
  'rsa-2048': {
    keys: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
    sign: (k) =>
      sign('sha256', input, {
        key: k.privateKey,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: constants.RSA_PSS_SALTLEN_MAX_SIGN,
      }),
    verify: (k, sig) =>
      verify(
        'sha256',
        input,
        { key: k.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO },
        sig,
      ),
  },
  'ml-dsa-65': nodeHasMlDsa()
    ? {
        keys: () => generateKeyPairSync('ml-dsa-65'),
        sign: (k) => sign(null, input, k.privateKey),
        verify: (k, sig) => verify(null, input, k.publicKey, sig),
      }
    : {
        keys: () => ml_dsa65.keygen(randomBytes(32)),
        sign: (k) => ml_dsa65.sign(input, k.secretKey),
        verify: (k, sig) => ml_dsa65.verify(sig, input, k.publicKey),
      },
};

/** Whether node:crypto has ML-DSA here (as keyhold's pq/node-ml-dsa.ts decides, without its self-check). */
function nodeHasMlDsa() {
  if (process.env.KEYHOLD_PQ_IMPL === 'noble') return false;
  try {
    generateKeyPairSync('ml-dsa-44');
    return true;
  } catch {
    return false;
  }
}

function makeOp() {
  if (mode === 'aes-gcm-items') {
    const key = randomBytes(32);
    return () => {
      const c = createCipheriv('aes-256-gcm', key, randomBytes(12));
      c.update(input);
      c.final();
      c.getAuthTag();
    };
  }
  const m = /^(sign|verify)-(.*)$/.exec(mode ?? '');
  const s = m && SIGNERS[m[2]];
  if (!s) throw new Error(`unknown mode ${mode}`);
  const k = s.keys();
  if (m[1] === 'sign') return () => s.sign(k);
  const sig = s.sign(k);
  return () => {
    if (!s.verify(k, sig)) throw new Error('verification failed');
  };
}

/** Run op for `sec` seconds, checking the clock every few calls. */
function loop(op, sec) {
  const end = process.hrtime.bigint() + BigInt(Math.round(sec * 1e9));
  const start = process.hrtime.bigint();
  let ops = 0;
  let now = start;
  while (now < end) {
    for (let i = 0; i < 16; i++) op();
    ops += 16;
    now = process.hrtime.bigint();
  }
  return { ops, seconds: Number(now - start) / 1e9 };
}

const op = makeOp();
if (warmupSec > 0) loop(op, warmupSec);
const r = loop(op, durationSec);
process.stdout.write(JSON.stringify({ mode, opsPerSec: r.ops / r.seconds, ops: r.ops, seconds: r.seconds }) + '\n');
