/**
 * The transit data CLI against the real daemon, in the exact forms scripts use: binary-safe encrypt
 * and decrypt via stdin/--file, --field, sign/verify exit codes like `openssl dgst -verify`, hmac,
 * rewrap, datakey, random, hash, and envelope encryption of files with tamper and truncation detection.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { randomBytes, createHash } from 'node:crypto';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { BIN, cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon({ dev: true });
  const r = await d.req('POST', 'transit/keys/cli', {});
  if (r.status !== 200) throw new Error(r.text);
  await d.req('POST', 'transit/keys/cli-ec', { type: 'ecdsa-p256' });
});
afterAll(async () => {
  await d.stop();
  cleanup(d.dir);
});

/** Exit status with stderr in the failure message. */
function exits(r: { exitCode: number; stderr: string }, code: number): void {
  expect({ exitCode: r.exitCode, stderr: code === 0 ? r.stderr : '' }).toEqual({ exitCode: code, stderr: '' });
}

/** The CLI with binary-exact stdout (d.cli strips a final newline, which binary output may end with). */
async function raw(
  args: string[],
  input?: Buffer | string,
): Promise<{ exitCode: number; stdout: Buffer; stderr: string }> {
  const r = await execa(process.execPath, [BIN, ...args], {
    input,
    reject: false,
    encoding: 'buffer',
    stripFinalNewline: false,
    env: { KEYHOLD_HOME: d.dir, KEYHOLD_ADDR: d.addr, KEYHOLD_TOKEN: d.token, NO_COLOR: '1' },
    timeout: 60_000,
  });
  return {
    exitCode: r.exitCode ?? -1,
    stdout: Buffer.from(r.stdout as unknown as Uint8Array),
    stderr: Buffer.from(r.stderr as unknown as Uint8Array).toString(),
  };
}

describe('encrypt and decrypt', () => {
  test('binary stdin round-trips through --field ciphertext and raw decrypt output', async () => {
    const data = Buffer.concat([randomBytes(200), Buffer.from([0, 10, 13, 255])]);
    const enc = await d.cli(['transit', 'encrypt', 'cli', '--field', 'ciphertext'], { input: data });
    exits(enc, 0);
    expect(enc.stdout).toMatch(/^vault:v1:[A-Za-z0-9+/=]+$/);
    const dec = await raw(['transit', 'decrypt', 'cli', enc.stdout]);
    exits(dec, 0);
    expect(dec.stdout).toEqual(data);
    const viaStdin = await raw(['transit', 'decrypt', 'cli'], enc.stdout + '\n');
    expect(viaStdin.stdout).toEqual(data);
    const nl = await raw([
      'transit',
      'decrypt',
      'cli',
      (await d.cli(['transit', 'encrypt', 'cli', '--field', 'ciphertext'], { input: 'line\n' })).stdout,
    ]);
    expect(nl.stdout.toString()).toBe('line\n');
    const kept = await d.cli(['transit', 'decrypt', 'cli', '--base64', enc.stdout]);
    expect(kept.stdout.trim()).toBe(data.toString('base64'));
  });

  test('--file and --base64 inputs', async () => {
    const f = join(d.dir, 'in.bin');
    writeFileSync(f, Buffer.from('from a file'));
    const a = await d.cli(['transit', 'encrypt', 'cli', '--file', f, '--field', 'ciphertext']);
    expect((await d.cli(['transit', 'decrypt', 'cli', a.stdout])).stdout).toBe('from a file');
    const b = await d.cli(['transit', 'encrypt', 'cli', '--base64', '--field', 'ciphertext'], {
      input: Buffer.from('already').toString('base64') + '\n',
    });
    expect((await d.cli(['transit', 'decrypt', 'cli', b.stdout])).stdout).toBe('already');
    const bad = await d.cli(['transit', 'encrypt', 'cli', '--base64'], { input: 'not base64!' });
    expect(bad.exitCode).toBe(1);
  });

  test('server errors exit 2 with the message on stderr; nothing on stdout', async () => {
    const r = await d.cli(['transit', 'decrypt', 'cli', 'vault:v7:AAAA']);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('invalid ciphertext: version is too new');
  });

  test('--format json prints the response data', async () => {
    const r = await d.cli(['--format', 'json', 'transit', 'encrypt', 'cli'], { input: 'x' });
    expect(JSON.parse(r.stdout)).toMatchObject({ key_version: 1 });
  });

  test('rewrap and datakey', async () => {
    const ct = (await d.cli(['transit', 'encrypt', 'cli', '--field', 'ciphertext'], { input: 'keep' })).stdout;
    await d.req('POST', 'transit/keys/cli/rotate', {});
    const re = await d.cli(['transit', 'rewrap', 'cli', ct, '--field', 'ciphertext']);
    expect(re.stdout).toMatch(/^vault:v2:/);
    expect((await d.cli(['transit', 'decrypt', 'cli', re.stdout])).stdout).toBe('keep');
    const dk = await d.cli(['--format', 'json', 'transit', 'datakey', 'plaintext', 'cli', '--bits', '128']);
    const data = JSON.parse(dk.stdout);
    expect(Buffer.from(data.plaintext, 'base64').length).toBe(16);
    const w = await d.cli(['--format', 'json', 'transit', 'datakey', 'wrapped', 'cli']);
    expect(JSON.parse(w.stdout).plaintext).toBeUndefined();
  });
});

describe('sign, verify, hmac, hash, random', () => {
  test('verify exits 0 for a valid signature and 1 for an invalid one', async () => {
    const sig = (await d.cli(['transit', 'sign', 'cli-ec', '--field', 'signature'], { input: 'message' })).stdout;
    expect(sig).toMatch(/^vault:v1:/);
    const good = await d.cli(['transit', 'verify', 'cli-ec', '--signature', sig], { input: 'message' });
    exits(good, 0);
    expect(good.stdout).toBe('Verified OK');
    const bad = await d.cli(['transit', 'verify', 'cli-ec', '--signature', sig], { input: 'tampered' });
    exits(bad, 1);
    expect(bad.stdout).toBe('Verification failure');
    const jws = (
      await d.cli(
        [
          'transit',
          'sign',
          'cli-ec',
          '--marshaling-algorithm',
          'jws',
          '--hash-algorithm',
          'sha2-384',
          '--field',
          'signature',
        ],
        { input: 'm' },
      )
    ).stdout;
    exits(
      await d.cli(
        [
          'transit',
          'verify',
          'cli-ec',
          '--signature',
          jws,
          '--marshaling-algorithm',
          'jws',
          '--hash-algorithm',
          'sha2-384',
        ],
        { input: 'm' },
      ),
      0,
    );
  });

  test('hmac and verify --hmac', async () => {
    const mac = (
      await d.cli(['transit', 'hmac', 'cli', '--algorithm', 'sha2-512', '--field', 'hmac'], { input: 'data' })
    ).stdout;
    expect(mac).toMatch(/^vault:v\d:/);
    exits(
      await d.cli(['transit', 'verify', 'cli', '--hmac', mac, '--hash-algorithm', 'sha2-512'], { input: 'data' }),
      0,
    );
    expect(
      (await d.cli(['transit', 'verify', 'cli', '--hmac', mac, '--hash-algorithm', 'sha2-512'], { input: 'datb' }))
        .exitCode,
    ).toBe(1);
    expect(
      (await d.cli(['transit', 'verify', 'cli', '--hmac', mac, '--signature', 'x'], { input: 'd' })).exitCode,
    ).toBe(1);
  });

  test('hash prints the digest; random prints text or raw bytes', async () => {
    const h = await raw(['transit', 'hash', 'sha2-512'], 'abc');
    expect(h.stdout.toString()).toBe(createHash('sha512').update('abc').digest('hex') + '\n');
    const r = await raw(['transit', 'random', '24', '--encoding', 'hex']);
    expect(r.stdout.toString()).toMatch(/^[0-9a-f]{48}\n$/);
    const bin = await raw(['transit', 'random', '24', '--binary']);
    expect(bin.stdout.length).toBe(24);
  });
});

describe('envelope', () => {
  const size = 3 * 1024 * 1024 + 12345;
  test('a multi-chunk file round-trips through --file/--output and through stdin/stdout', async () => {
    const data = randomBytes(size);
    const inFile = join(d.dir, 'big.bin');
    const envFile = join(d.dir, 'big.khev');
    const outFile = join(d.dir, 'big.out');
    writeFileSync(inFile, data);
    const e = await d.cli(['transit', 'encrypt', 'cli', '--envelope', '--file', inFile, '--output', envFile]);
    expect(e.exitCode).toBe(0);
    const env = readFileSync(envFile);
    expect(env.subarray(0, 4).toString()).toBe('KHEV');
    const o = await d.cli(['transit', 'decrypt', 'cli', '--envelope', '--file', envFile, '--output', outFile]);
    expect(o.exitCode).toBe(0);
    expect(readFileSync(outFile).equals(data)).toBe(true);
    const piped = await raw(['transit', 'encrypt', 'cli', '--envelope'], data.subarray(0, 5000));
    const back = await raw(['transit', 'decrypt', 'cli', '--envelope'], piped.stdout);
    expect(back.stdout).toEqual(data.subarray(0, 5000));
  });

  test('a tampered envelope fails with a non-zero exit and the output file is removed', async () => {
    const data = randomBytes(2 * 1024 * 1024 + 1);
    const envFile = join(d.dir, 't.khev');
    const outFile = join(d.dir, 't.out');
    const enc = await d.cli(['transit', 'encrypt', 'cli', '--envelope', '--output', envFile], { input: data });
    expect(enc.exitCode).toBe(0);
    const env = readFileSync(envFile);
    env[env.length - 100] ^= 1;
    writeFileSync(envFile, env);
    const r = await d.cli(['transit', 'decrypt', 'cli', '--envelope', '--file', envFile, '--output', outFile]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/failed authentication/);
    expect(existsSync(outFile)).toBe(false);
  });

  test('a truncated envelope (final chunk dropped) is detected', async () => {
    const data = randomBytes(2 * 1024 * 1024);
    const enc = await raw(['transit', 'encrypt', 'cli', '--envelope'], data);
    const env = enc.stdout;
    const cut = env.subarray(0, env.length - 16);
    const r = await raw(['transit', 'decrypt', 'cli', '--envelope'], cut);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/truncated|failed authentication/);
  });

  test('an envelope made with one key does not open with another', async () => {
    await d.req('POST', 'transit/keys/cli-other', {});
    const enc = await raw(['transit', 'encrypt', 'cli', '--envelope'], 'secret');
    const r = await raw(['transit', 'decrypt', 'cli-other', '--envelope'], enc.stdout);
    expect(r.exitCode).toBe(2);
  });
});
