/**
 * Support for the vault-face tests: a directory holding a `vault` symlink to the built bin/keyhold.js
 * (as the docs tell users to install it), and a runner of bash scripts (`set -euo pipefail`, Debian's
 * jq) with that directory first on PATH and only VAULT_* variables pointing at the daemon.
 */
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { BIN } from '../support/daemon.js';

/** A fresh directory with `vault` -> bin/keyhold.js in it. */
export function vaultBinDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-vault-bin-'));
  symlinkSync(BIN, join(dir, 'vault'));
  return dir;
}

/** Whether jq is installed (scripts/setup-test-env.sh installs Debian's). */
export async function haveJq(): Promise<boolean> {
  return (await execa('jq', ['--version'], { reject: false })).exitCode === 0;
}

/** What a script did. */
export interface ScriptRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Run `script` with bash (set -euo pipefail), `vault` on PATH, and `env` (VAULT_ADDR, VAULT_TOKEN, ...). */
export async function runScript(
  binDir: string,
  script: string,
  env: Record<string, string | undefined> = {},
  input?: string,
): Promise<ScriptRun> {
  const r = await execa('bash', ['-c', `set -euo pipefail\n${script}`], {
    reject: false,
    input,
    timeout: 120_000,
    extendEnv: false,
    env: {
      PATH: `${binDir}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      HOME: process.env.HOME,
      TMPDIR: process.env.TMPDIR,
      NO_COLOR: '1',
      ...env,
    },
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}
