import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, cleanup, startDaemon, type Daemon } from '../support/daemon.js';
import { parseFast } from '../../src/cli/fast-path.js';

// The fast path (src/cli/fast-path.ts) answers `transit encrypt|decrypt` without loading the full
// CLI; these tests hold it to the full CLI's behaviour.
describe('CLI fast path for transit encrypt/decrypt', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon({ tcp: true });
    expect((await d.req('POST', 'transit/keys/fp', {})).status).toBeLessThan(300);
  });
  afterAll(async () => {
    await d.stop();
    cleanup(d.dir);
  });

  it('takes only plain flags and leaves everything else to the full CLI', () => {
    expect(parseFast(['transit', 'encrypt', 'k', '--field', 'ciphertext'])).toMatchObject({
      op: 'encrypt',
      name: 'k',
      field: 'ciphertext',
      mount: 'transit',
    });
    expect(parseFast(['transit', 'decrypt', 'k', 'vault:v1:x', '--base64', '--mount=/t2/'])).toMatchObject({
      op: 'decrypt',
      ciphertext: 'vault:v1:x',
      base64: true,
      mount: 't2',
    });
    for (const argv of [
      ['transit', 'encrypt', 'k', '--envelope'],
      ['transit', 'encrypt', 'k', '--context', 'YQ=='],
      ['transit', 'encrypt', 'k', '--help'],
      ['transit', 'encrypt', '-h', 'k'],
      ['transit', 'encrypt'],
      ['transit', 'encrypt', 'k', '--format', 'yaml'],
      ['transit', 'decrypt', 'k', '--file', 'x'],
      ['transit', 'sign', 'k'],
      ['kv', 'get', 'x'],
    ])
      expect(parseFast(argv), argv.join(' ')).toBeNull();
  });

  it('encrypts stdin and prints the same table shape as the full CLI', async () => {
    const fast = await d.cli(['transit', 'encrypt', 'fp'], { input: 'hello' });
    const full = await d.cli(['transit', 'encrypt', 'fp', '--key-version', '0'], { input: 'hello' }); // --key-version forces the full CLI
    expect(fast.exitCode).toBe(0);
    expect(full.exitCode).toBe(0);
    const shape = (s: string) => s.replace(/vault:v1:\S+/g, 'CT');
    expect(shape(fast.stdout)).toBe(shape(full.stdout));
    expect(fast.stdout).toMatch(/^Key\s+Value\n---\s+-----\nciphertext\s+vault:v1:/);
  });

  it('round-trips raw bytes with --field ciphertext and decrypt, and --format json matches', async () => {
    const bytes = Buffer.from([0, 1, 2, 255, 10, 13]);
    const enc = await d.cli(['transit', 'encrypt', 'fp', '--field', 'ciphertext'], { input: bytes });
    expect(enc.exitCode).toBe(0);
    expect(enc.stdout).toMatch(/^vault:v1:[A-Za-z0-9+/=]+$/);
    const dec = await d.cli(['transit', 'decrypt', 'fp', enc.stdout]);
    expect(dec.exitCode).toBe(0);
    expect(dec.stdoutBuffer.equals(bytes)).toBe(true);
    const b64 = await d.cli(['transit', 'decrypt', 'fp', '--base64'], { input: enc.stdout });
    expect(b64.stdout.trim()).toBe(bytes.toString('base64'));
    const json = await d.cli(['transit', 'decrypt', 'fp', enc.stdout, '--format', 'json']);
    expect(JSON.parse(json.stdout)).toEqual({ plaintext: bytes.toString('base64') });
  });

  it('reports server errors with exit 2 and local errors with exit 1, as the full CLI does', async () => {
    const missing = await d.cli(['transit', 'decrypt', 'nokey', 'vault:v1:AAAA']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/^Error: encryption key not found \(HTTP 400: POST transit\/decrypt\/nokey\)/);
    const badB64 = await d.cli(['transit', 'encrypt', 'fp', '--base64'], { input: 'not base64!' });
    expect(badB64.exitCode).toBe(1);
    expect(badB64.stderr).toMatch(/--base64: input is not valid base64/);
    const noField = await d.cli(['transit', 'encrypt', 'fp', '--field', 'nope'], { input: 'x' });
    expect(noField.exitCode).toBe(1);
    expect(noField.stderr).toMatch(/field "nope" not present/);
    const denied = await d.cli(['transit', 'encrypt', 'fp'], { input: 'x', token: 'not-a-token' });
    expect(denied.exitCode).toBe(2);
  });

  it('works over TCP with --address, and names an unreachable daemon with exit 1', async () => {
    const enc = await d.cli(['transit', 'encrypt', 'fp', '--address', d.tcp!, '--field', 'ciphertext'], {
      input: 'over tcp',
    });
    expect(enc.exitCode).toBe(0);
    const dec = await d.cli(['transit', 'decrypt', 'fp', enc.stdout, '--address', d.tcp!]);
    expect(dec.stdout).toBe('over tcp');
    const down = await d.cli(['transit', 'encrypt', 'fp', '--address', `unix://${d.dir}/nothing.sock`], { input: 'x' });
    expect(down.exitCode).toBe(1);
    expect(down.stderr).toMatch(/cannot reach keyhold at unix:\/\/.*nothing\.sock: is the daemon running/);
  });

  it('answers status and --version as the full CLI does (KEYHOLD_NO_FAST_PATH=1 forces the full CLI)', async () => {
    const full = { KEYHOLD_NO_FAST_PATH: '1' };
    expect(parseFast(['status', '--format', 'json'])).toMatchObject({ op: 'status', format: 'json' });
    expect(parseFast(['--version'])).toMatchObject({ op: 'version' });
    for (const argv of [
      ['status', 'extra'],
      ['status', '--mount', 'x'],
      ['status', '--format', 'yaml'],
      ['status', '--help'],
      ['--version', 'x'],
      ['kv', '--version'],
    ])
      expect(parseFast(argv), argv.join(' ')).toBeNull();
    for (const args of [
      ['status'],
      ['status', '--format', 'json'],
      ['status', '--field', 'sealed'],
      ['--version'],
      ['-v'],
    ]) {
      const fast = await d.cli(args);
      const slow = await d.cli(args, { env: full });
      expect(fast.exitCode, args.join(' ')).toBe(slow.exitCode);
      expect(fast.stdout, args.join(' ')).toBe(slow.stdout);
      expect(fast.stderr, args.join(' ')).toBe(slow.stderr);
    }
    expect((await d.cli(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+/);
    const down = { KEYHOLD_ADDR: `unix://${d.dir}/nothing.sock` };
    const a = await d.cli(['status'], { env: down });
    const b = await d.cli(['status'], { env: { ...down, ...full } });
    expect([a.exitCode, a.stderr]).toEqual([b.exitCode, b.stderr]);
    expect(a.exitCode).toBe(1);
  });

  it('the bin shim runs the bundled fast path only while it is newer than dist/ (a bare tsc never leaves a stale bundle in use)', () => {
    // A copy of the shim beside stand-ins for the two fast paths, each saying which one ran.
    const root = join(d.dir, 'shim-tree');
    mkdirSync(join(root, 'bin'), { recursive: true });
    mkdirSync(join(root, 'dist', 'bundle'), { recursive: true });
    mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
    copyFileSync(join(ROOT, 'bin', 'keyhold.js'), join(root, 'bin', 'keyhold.js'));
    copyFileSync(join(ROOT, 'bin', 'package.json'), join(root, 'bin', 'package.json'));
    const bundle = join(root, 'dist', 'bundle', 'fast-path.cjs');
    const esm = join(root, 'dist', 'cli', 'fast-path.js');
    writeFileSync(bundle, "exports.runFast = async () => { process.stdout.write('bundle'); return true; };\n");
    writeFileSync(esm, "export async function runFast() { process.stdout.write('dist'); return true; }\n");
    const run = () =>
      spawnSync(process.execPath, [join(root, 'bin', 'keyhold.js'), '--version'], { encoding: 'utf8' }).stdout;
    utimesSync(esm, new Date(1_000_000), new Date(1_000_000));
    utimesSync(bundle, new Date(2_000_000), new Date(2_000_000));
    expect(run()).toBe('bundle');
    utimesSync(esm, new Date(3_000_000), new Date(3_000_000)); // tsc ran after the bundle was made
    expect(run()).toBe('dist');
    rmSync(bundle);
    expect(run()).toBe('dist');
  });
});
