/** CLI for issue 31: the gitlab type and Vault's type ids (aliases) in `sync dest` commands. */
import { describe, expect, it } from 'vitest';
import { runCli } from './harness.js';

describe('sync dest create gitlab and aliases', () => {
  it('creates a gitlab destination: token from stdin, flags as fields', async () => {
    const r = await runCli(
      [
        'sync',
        'dest',
        'create',
        'gitlab',
        'ci',
        '--access-token',
        '-',
        '--project-id',
        'acme/app',
        '--environment-scope',
        'production',
        '--masked',
        'true',
        '--format',
        'json',
      ],
      [{ method: 'POST', path: 'sys/sync/destinations/gitlab/ci', reply: { data: { name: 'ci', type: 'gitlab' } } }],
      'glpat-secret\n',
    );
    expect(r.status, String(r.error)).toBe(0);
    expect(r.client.sent[0]!.body).toEqual({
      access_token: 'glpat-secret',
      project_id: 'acme/app',
      environment_scope: 'production',
      masked: 'true',
    });
  });

  it("accepts Vault's type ids and keeps them in the path; a field of another type is refused naming the type", async () => {
    const r = await runCli(
      [
        'sync',
        'dest',
        'create',
        'aws-sm',
        'prod',
        '--role-arn',
        'arn:aws:iam::123456789012:role/sync',
        '--identity-token-audience',
        'sts.amazonaws.com',
        '--format',
        'json',
      ],
      [
        {
          method: 'POST',
          path: 'sys/sync/destinations/aws-sm/prod',
          reply: { data: { name: 'prod', type: 'aws-sm' } },
        },
      ],
    );
    expect(r.status, String(r.error)).toBe(0);
    expect(r.client.sent[0]!.body).toEqual({
      role_arn: 'arn:aws:iam::123456789012:role/sync',
      identity_token_audience: 'sts.amazonaws.com',
    });
    const bad = await runCli(['sync', 'dest', 'create', 'gh', 'x', '--project-id', '1']);
    expect(bad.status).toBe(1);
    expect(String(bad.error)).toMatch(/does not apply to repohost/);
    const unknown = await runCli(['sync', 'dest', 'read', 'aws-kms', 'x']);
    expect(unknown.status).toBe(1);
    expect(String(unknown.error)).toMatch(/unknown destination type "aws-kms"; one of: .*gitlab.*aws-sm/);
  });
});
