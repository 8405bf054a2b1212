/**
 * The single executable (issue 26): `transit encrypt` from dist/bin/keyhold-linux-x64 (built by
 * `npm run package`), a new process per call, against `node -e 0` of the machine's Node.js measured
 * in the same run, interleaved. Figures: the same against `node -e 0` of the Node.js inside the
 * executable (the LTS binary it was built from), and the executable's size.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCmd } from '../lib/procs.js';
import { median } from '../lib/stats.js';
import { MissingFeature, ensureKey } from '../lib/setup.js';

const AES = 'bench-aes';
const EXE = join(ROOT, 'dist', 'bin', 'keyhold-linux-x64');

/** The Node.js binary the executable was built from (scripts/package.mjs's cache), or null. */
async function ltsNode() {
  const { seaNode } = await import('../../scripts/package.mjs');
  try {
    const n = seaNode();
    return existsSync(n) ? n : null;
  } catch {
    return null;
  }
}

/** Cases of the single executable. */
export const binaryCases = [
  {
    id: 'cli-encrypt-binary',
    unit: 'ms',
    checks: [{ on: 'ratio', op: '<=', limit: 1.0 }],
    describe:
      "`printf x | keyhold-linux-x64 transit encrypt bench-aes --field ciphertext` (the single executable, `npm run package`), a new process per call, wall time of the round trip (median); baseline: `node -e 0` of the machine's Node.js, interleaved. Figures: the ratio against `node -e 0` of the Node.js inside the executable, and the executable's size",
    async run(ctx) {
      if (!existsSync(EXE))
        throw new MissingFeature('dist/bin/keyhold-linux-x64 is missing: run `npm run package` first');
      await ensureKey(ctx, AES, 'aes256-gcm96');
      const env = {
        ...process.env,
        KEYHOLD_HOME: join(ctx.dir, 'cli-home'),
        KEYHOLD_ADDR: `unix://${ctx.kh.socket}`,
        KEYHOLD_TOKEN: ctx.token,
        NO_COLOR: '1',
      };
      const input = Buffer.from('x');
      const args = ['transit', 'encrypt', AES, '--field', 'ciphertext'];
      const first = await runCmd(EXE, args, { input, env });
      if (first.code !== 0 || !first.stdout.toString().startsWith('vault:v1:'))
        throw new Error(
          `keyhold-linux-x64 transit encrypt exited ${first.code}: ${first.stderr.toString().slice(-300)}`,
        );
      const lts = await ltsNode();
      // Warm the page cache (the executable is 150 MiB; only the pages it touches are read).
      for (let i = 0; i < 3; i++) {
        await runCmd(process.execPath, ['-e', '0']);
        if (lts) await runCmd(lts, ['-e', '0']);
        await runCmd(EXE, args, { input, env });
      }
      const base = [];
      const ltsBase = [];
      const exe = [];
      for (let i = 0; i < ctx.cfg.cliRuns; i++) {
        base.push((await runCmd(process.execPath, ['-e', '0'])).ms);
        if (lts) ltsBase.push((await runCmd(lts, ['-e', '0'])).ms);
        const r = await runCmd(EXE, args, { input, env });
        if (r.code !== 0) throw new Error(`keyhold-linux-x64 transit encrypt exited ${r.code}`);
        exe.push(r.ms);
      }
      const b = median(base);
      const figures = lts ? { lts_ratio: median(exe) / median(ltsBase) } : {};
      return {
        value: median(exe),
        baseline: b,
        figures,
        detail: {
          runs: ctx.cfg.cliRuns,
          min_ms: Math.min(...exe),
          baseline_min_ms: Math.min(...base),
          node_version: process.version,
          lts_ratio: lts ? median(exe) / median(ltsBase) : null,
          lts_node_ms: lts ? median(ltsBase) : null,
          lts_node: lts,
          executable_mib: statSync(EXE).size / 2 ** 20,
        },
      };
    },
  },
];
