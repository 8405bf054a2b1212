import { describe, expect, it } from 'vitest';
import { runCli } from './harness.js';

describe('transit encrypt', () => {
  it('sends stdin base64-encoded with the flags derived from the route, and prints the answer', async () => {
    const r = await runCli(
      ['transit', 'encrypt', 'app', '--context', 'Y3R4', '--key-version', '2', '--format', 'json'],
      [
        {
          method: 'POST',
          path: 'transit/encrypt/app',
          reply: { data: { ciphertext: 'vault:v2:abc', key_version: 2 } },
        },
      ],
      'hello',
    );
    expect(r.status).toBe(0);
    expect(r.client.sent[0]!.body).toEqual({
      plaintext: Buffer.from('hello').toString('base64'),
      context: 'Y3R4',
      key_version: 2,
    });
    expect(JSON.parse(r.stdout)).toEqual({ ciphertext: 'vault:v2:abc', key_version: 2 });
    r.client.done();
  });

  it('prints one raw field with --field, on another mount', async () => {
    const r = await runCli(
      ['transit', 'encrypt', 'app', '--mount', '/pay/', '--field', 'ciphertext'],
      [{ method: 'POST', path: 'pay/encrypt/app', reply: { data: { ciphertext: 'vault:v1:x' } } }],
      'a',
    );
    expect(r.stdout).toBe('vault:v1:x');
    expect(r.status).toBe(0);
  });

  it('refuses a key version that is not an integer before sending anything (exit 1)', async () => {
    const r = await runCli(['transit', 'encrypt', 'app', '--key-version', 'two'], [], 'a');
    expect(r.status).toBe(1);
    expect(r.client.sent).toEqual([]);
  });

  it('exits 2 on a server refusal and hints at --envelope for a 413', async () => {
    const r = await runCli(
      ['transit', 'encrypt', 'app'],
      [{ method: 'POST', path: 'transit/encrypt/app', status: 413, reply: { errors: ['request too large'] } }],
      'a',
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('use --envelope');
  });
});

describe('transit decrypt', () => {
  it('takes the ciphertext from the argument and writes the raw plaintext bytes', async () => {
    const bytes = Buffer.from([0, 1, 2, 255]);
    const r = await runCli(
      ['transit', 'decrypt', 'app', 'vault:v1:zz', '--nonce', 'bm9uY2U='],
      [{ method: 'POST', path: 'transit/decrypt/app', reply: { data: { plaintext: bytes.toString('base64') } } }],
    );
    expect(r.client.sent[0]!.body).toEqual({ ciphertext: 'vault:v1:zz', nonce: 'bm9uY2U=' });
    expect(r.stdoutBytes.equals(bytes)).toBe(true);
    expect(r.status).toBe(0);
  });

  it('reads the ciphertext from stdin and prints base64 with --base64', async () => {
    const r = await runCli(
      ['transit', 'decrypt', 'app', '--base64'],
      [{ method: 'POST', path: 'transit/decrypt/app', reply: { data: { plaintext: 'aGk=' } } }],
      'vault:v1:from-stdin\n',
    );
    expect(r.client.sent[0]!.body).toEqual({ ciphertext: 'vault:v1:from-stdin' });
    expect(r.stdout).toBe('aGk=\n');
  });

  it('fails locally (exit 1) when no ciphertext is given', async () => {
    const r = await runCli(['transit', 'decrypt', 'app'], [], '');
    expect(r.status).toBe(1);
    expect(String(r.error)).toMatch(/no ciphertext given/);
  });
});

describe('transit verify', () => {
  it('exits 0 when valid and 1 when not', async () => {
    const ok = await runCli(
      ['transit', 'verify', 'k', '--signature', 'vault:v1:s', '--prehashed'],
      [{ method: 'POST', path: 'transit/verify/k', reply: { data: { valid: true } } }],
      'x',
    );
    expect(ok.client.sent[0]!.body).toEqual({ input: 'eA==', signature: 'vault:v1:s', prehashed: true });
    expect([ok.status, ok.stdout]).toEqual([0, 'Verified OK\n']);
    const bad = await runCli(
      ['transit', 'verify', 'k', '--hmac', 'vault:v1:h'],
      [{ method: 'POST', path: 'transit/verify/k', reply: { data: { valid: false } } }],
      'x',
    );
    expect([bad.status, bad.stdout]).toEqual([1, 'Verification failure\n']);
  });
});
