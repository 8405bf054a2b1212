// The CLI's -wrap-ttl and `keyhold unwrap` against the real daemon (issue 14 part 5); the routes they
// use are tested in process in test/unit/routes/policy-enforcement.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;
beforeAll(async () => {
  d = await startDaemon();
});
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('CLI: -wrap-ttl and keyhold unwrap', () => {
  it('writes wrapped, prints the wrapping token, unwraps once from stdin', async () => {
    const w = await d.cli([
      'write',
      '-wrap-ttl=60s',
      'sys/wrapping/wrap',
      'password=s3cret',
      '--field',
      'wrapping_token',
    ]);
    expect(w.exitCode, w.stderr).toBe(0);
    expect(w.stdout).toMatch(/^hvs\.\S+$/);
    expect(w.stdout).not.toContain('s3cret');
    await d.req('POST', 'secret/data/wrapped', { data: { password: 's3cret' } });
    const table = await d.cli(['read', '--wrap-ttl', '2m', 'secret/data/wrapped']);
    expect(table.exitCode, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/wrapping_token_ttl\s+120/);
    expect(table.stdout).toMatch(/wrapping_token_creation_path\s+secret\/data\/wrapped/);
    const u = await d.cli(['unwrap', '-', '--field', 'password'], { input: w.stdout });
    expect(u.exitCode, u.stderr).toBe(0);
    expect(u.stdout).toBe('s3cret');
    const again = await d.cli(['unwrap', '-'], { input: w.stdout });
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toMatch(/wrapping token is not valid or does not exist/);
  });
});
