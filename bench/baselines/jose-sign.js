/**
 * Baseline of `jwt-sign-es256`: the `jose` library signing ES256 JWTs in one process, with the same
 * claims, header and lifetime keyhold signs, `concurrency` signatures in flight (jose signs through
 * WebCrypto, which runs on libuv's thread pool, as keyhold's daemon serves its connections).
 *
 * Usage: node bench/baselines/jose-sign.js <durationSec> [warmupSec] [concurrency]
 * Prints one JSON line {opsPerSec, ops, seconds}.
 */
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';

const [durationArg, warmupArg, concurrencyArg] = process.argv.slice(2);
const durationSec = Number(durationArg ?? 5);
const warmupSec = Number(warmupArg ?? 0);
const concurrency = Number(concurrencyArg ?? 16);
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

const signOne = () =>
  new SignJWT({ sub: 'bench' })
    .setProtectedHeader({ alg: 'ES256', kid: 'bench-kid', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);

/** Sign for `sec` seconds with `concurrency` workers; returns the count. */
async function run(sec) {
  const end = performance.now() + sec * 1000;
  let n = 0;
  const worker = async () => {
    while (performance.now() < end) {
      await signOne();
      n++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return n;
}

if (warmupSec > 0) await run(warmupSec);
const t0 = performance.now();
const ops = await run(durationSec);
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(JSON.stringify({ opsPerSec: ops / seconds, ops, seconds }) + '\n');
