/**
 * Test support: a private SoftHSM2 token per test run (reference managed-keys-wire.md 4.6 and 5.4).
 * Each call makes a temp dir with its own softhsm2.conf (SOFTHSM2_CONF) and token directory and
 * initialises a token with `softhsm2-util --init-token`. scripts/setup-test-env.sh installs softhsm2
 * and opensc when missing; `softhsmMissing()` says why tests must skip when that was impossible.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's module path (a symlink into the multiarch directory). */
export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

/** A reason to skip, or null when SoftHSM2, pkcs11-tool and the pkcs11js binding are all present. */
export function softhsmMissing(): string | null {
  if (!existsSync(SOFTHSM_MODULE))
    return `${SOFTHSM_MODULE} not found (scripts/setup-test-env.sh installs softhsm2 as root with apt-get)`;
  try {
    execFileSync('softhsm2-util', ['--version'], { stdio: 'ignore' });
  } catch {
    return 'softhsm2-util not found';
  }
  try {
    createRequire(import.meta.url)('pkcs11js');
  } catch (e) {
    return `the pkcs11js binding is not built: ${(e as Error).message.split('\n')[0]}`;
  }
  return null;
}

/** A private SoftHSM2 setup. */
export interface SoftHsm {
  dir: string;
  conf: string;
  tokenDir: string;
  /** Environment for processes that use it (SOFTHSM2_CONF). */
  env: Record<string, string>;
  /** Initialise a token; returns its label. */
  initToken(label: string, pin: string, soPin?: string): string;
  /** Run pkcs11-tool against the module with this configuration. */
  tool(args: string[]): string;
  cleanup(): void;
}

/** Make a temp SoftHSM2 configuration and token directory. */
export function createSoftHsm(): SoftHsm {
  const dir = mkdtempSync(join(tmpdir(), 'keyhold-softhsm-'));
  const tokenDir = join(dir, 'tokens');
  mkdirSync(tokenDir);
  const conf = join(dir, 'softhsm2.conf');
  writeFileSync(
    conf,
    `directories.tokendir = ${tokenDir}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\nslots.mechanisms = ALL\n`,
  );
  const env = { SOFTHSM2_CONF: conf };
  return {
    dir,
    conf,
    tokenDir,
    env,
    initToken(label, pin, soPin = '87654321') {
      execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--pin', pin, '--so-pin', soPin], {
        env: { ...process.env, ...env },
        stdio: 'pipe',
      });
      return label;
    },
    tool(args) {
      return execFileSync('pkcs11-tool', ['--module', SOFTHSM_MODULE, ...args], {
        env: { ...process.env, ...env },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
