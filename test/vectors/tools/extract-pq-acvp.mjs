/**
 * Extract a few NIST ACVP cases per parameter set into test/vectors/ml-dsa-acvp.json and slh-dsa-acvp.json.
 * Run in a directory holding the decompressed ACVP files (paulmillr/acvp-vectors acvp/<name>.json.gz, gunzipped):
 *   node extract-pq-acvp.mjs   (writes ml-dsa-acvp.json, slh-dsa-acvp.json there)
 */
import fs from 'node:fs';
const rd = (f) => JSON.parse(fs.readFileSync(f + '.json'));
const kg = rd('ML-DSA-keyGen-FIPS204/internalProjection');
const sv = rd('ML-DSA-sigVer-FIPS204/internalProjection');
const sgp = rd('ML-DSA-sigGen-FIPS204/prompt');
const sge = rd('ML-DSA-sigGen-FIPS204/expectedResults');
const sigById = new Map(sge.testGroups.flatMap((g) => g.tests.map((t) => [t.tcId, t.signature])));
const bySize = (a, b) => (a.message?.length ?? 0) - (b.message?.length ?? 0);
const HASHES = new Set([
  'SHA2-224',
  'SHA2-256',
  'SHA2-384',
  'SHA2-512',
  'SHA3-224',
  'SHA3-256',
  'SHA3-384',
  'SHA3-512',
]);
const STRENGTH = {
  'SHA2-224': 112,
  'SHA2-256': 128,
  'SHA2-384': 192,
  'SHA2-512': 256,
  'SHA3-224': 112,
  'SHA3-256': 128,
  'SHA3-384': 192,
  'SHA3-512': 256,
};
const NEED = { 'ML-DSA-44': 128, 'ML-DSA-65': 192, 'ML-DSA-87': 256 };
let PS = '';
const usable = (t) =>
  t.hashAlg === undefined || t.hashAlg === 'none' || (HASHES.has(t.hashAlg) && STRENGTH[t.hashAlg] >= NEED[PS]);
const out = {
  source:
    'NIST ACVP-Server gen-val/json-files (tag v1.1.0.43, commit 975de31eb83d), read from the gzip mirror paulmillr/acvp-vectors (commit 2e9216c) acvp/ML-DSA-*-FIPS204; hex as in the files',
  keyGen: [],
  sigGen: [],
  sigVer: [],
};
for (const g of kg.testGroups)
  for (const t of g.tests.slice(0, 2))
    out.keyGen.push({
      file: 'ML-DSA-keyGen-FIPS204/internalProjection.json',
      tcId: t.tcId,
      parameterSet: g.parameterSet,
      seed: t.seed,
      pk: t.pk,
      sk: t.sk,
    });
for (const g of sgp.testGroups) {
  PS = g.parameterSet;
  if (g.signatureInterface !== 'external') continue;
  const picks = [...g.tests].filter(usable).sort(bySize).slice(0, 1);
  for (const t of picks)
    out.sigGen.push({
      file: 'ML-DSA-sigGen-FIPS204/prompt.json + expectedResults.json',
      tcId: t.tcId,
      parameterSet: g.parameterSet,
      deterministic: g.deterministic,
      preHash: g.preHash,
      hashAlg: t.hashAlg ?? 'none',
      sk: t.sk,
      message: t.message,
      context: t.context,
      rnd: t.rnd,
      signature: sigById.get(t.tcId),
    });
}
for (const g of sv.testGroups) {
  PS = g.parameterSet;
  if (g.signatureInterface !== 'external') continue;
  const ok = [...g.tests]
    .filter(usable)
    .filter((t) => t.testPassed)
    .sort(bySize)
    .slice(0, 1);
  const bad = [...g.tests]
    .filter(usable)
    .filter((t) => !t.testPassed)
    .sort(bySize)
    .slice(0, 1);
  for (const t of [...ok, ...bad])
    out.sigVer.push({
      file: 'ML-DSA-sigVer-FIPS204/internalProjection.json',
      tcId: t.tcId,
      parameterSet: g.parameterSet,
      preHash: g.preHash,
      hashAlg: t.hashAlg,
      pk: t.pk,
      message: t.message,
      context: t.context,
      signature: t.signature,
      testPassed: t.testPassed,
      reason: t.reason,
    });
}
fs.writeFileSync('ml-dsa-acvp.json', JSON.stringify(out, null, 1) + '\n');
const slh = rd('SLH-DSA-keyGen-FIPS205/internalProjection');
const so = {
  source:
    'NIST ACVP-Server gen-val/json-files/SLH-DSA-keyGen-FIPS205/internalProjection.json (tag v1.1.0.43, commit 975de31eb83d), read from the gzip mirror paulmillr/acvp-vectors (commit 2e9216c)',
  keyGen: [],
};
for (const g of slh.testGroups) {
  const t = g.tests[0];
  so.keyGen.push({
    tcId: t.tcId,
    parameterSet: g.parameterSet,
    skSeed: t.skSeed,
    skPrf: t.skPrf,
    pkSeed: t.pkSeed,
    sk: t.sk,
    pk: t.pk,
  });
}
fs.writeFileSync('slh-dsa-acvp.json', JSON.stringify(so, null, 1) + '\n');
console.log(out.keyGen.length, out.sigGen.length, out.sigVer.length, so.keyGen.length);
for (const s of out.sigGen)
  console.log(s.tcId, s.parameterSet, s.deterministic, s.preHash, s.hashAlg, s.message.length);
for (const s of out.sigVer)
  console.log(s.tcId, s.parameterSet, s.preHash, s.hashAlg, s.testPassed, s.reason, s.message.length);
