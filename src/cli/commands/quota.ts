/** `keyhold quota list|read|write|delete`: rate-limit quotas (sys/quotas/rate-limit; `vault write sys/quotas/...` works too). */
import type { Command } from 'commander';
import { LocalError } from '../client.js';
import type { CliContext } from '../context.js';
import { grid } from '../output.js';

const BASE = 'sys/quotas/rate-limit';

function quotaName(name: string): string {
  const n = name.trim();
  if (!/^[\w.-]+$/.test(n)) throw new LocalError(`invalid quota name "${name}"`);
  return n;
}

/** Register the quota commands. */
export function register(program: Command, ctx: CliContext): void {
  const quota = program
    .command('quota')
    .description('Rate-limit quotas: requests per interval per client address, on a mount, a path or globally');

  quota
    .command('list')
    .description('List rate-limit quotas with their path and rate')
    .addHelpText('after', '\nExamples:\n  $ keyhold quota list\n  $ keyhold quota list --format=json')
    .action(async (_o, cmd: Command) => {
      const client = ctx.client(cmd);
      const res = await client.request('LIST', BASE, undefined, { allowStatus: [404] });
      const data = (res.body?.data ?? {}) as { keys?: string[] };
      const names = (res.status === 404 ? [] : (data.keys ?? [])).slice().sort();
      const g = ctx.globals(cmd);
      if (g.field || (g.format && g.format !== 'table')) return ctx.print(cmd, names);
      if (names.length === 0) {
        process.stderr.write('No rate-limit quotas.\n');
        return;
      }
      const rows: string[][] = [];
      for (const n of names) {
        const q = ((await client.read(`${BASE}/${encodeURIComponent(n)}`)).body?.data ?? {}) as Record<string, unknown>;
        rows.push([
          n,
          q.path === '' ? '(global)' : String(q.path),
          q.role ? String(q.role) : '',
          String(q.rate),
          `${q.interval}s`,
          q.block_interval ? `${q.block_interval}s` : '',
        ]);
      }
      process.stdout.write(grid(['Name', 'Path', 'Role', 'Rate', 'Interval', 'Block'], rows));
    });

  quota
    .command('read')
    .description('Read a rate-limit quota')
    .argument('<name>')
    .addHelpText('after', '\nExamples:\n  $ keyhold quota read transit-cap')
    .action(async (name: string, _o, cmd: Command) => {
      const res = await ctx.client(cmd).read(`${BASE}/${encodeURIComponent(quotaName(name))}`);
      await ctx.print(cmd, res.body?.data ?? null);
    });

  quota
    .command('write')
    .description('Create or update a rate-limit quota')
    .argument('<name>')
    .argument(
      '<fields...>',
      'rate=N (required on create), path=MOUNT[/PATH][*], role=NAME, interval=1s, block_interval=0s',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ keyhold quota write transit-cap path=transit/ rate=500\n  $ keyhold quota write ci-login path=auth/approle role=ci rate=5 interval=1m block_interval=5m',
    )
    .action(async (name: string, pairs: string[], _o, cmd: Command) => {
      const body = await ctx.parsePairs(pairs);
      const res = await ctx.client(cmd).write(`${BASE}/${encodeURIComponent(quotaName(name))}`, body);
      for (const w of (res.body?.warnings ?? []) as string[]) process.stderr.write(`WARNING! ${w}\n`);
      process.stderr.write(`Success! Data written to: ${BASE}/${name}\n`);
    });

  quota
    .command('delete')
    .description('Delete a rate-limit quota')
    .argument('<name>')
    .addHelpText('after', '\nExamples:\n  $ keyhold quota delete transit-cap')
    .action(async (name: string, _o, cmd: Command) => {
      await ctx.client(cmd).delete(`${BASE}/${encodeURIComponent(quotaName(name))}`);
      process.stderr.write(`Success! Data deleted (if it existed) at: ${BASE}/${name}\n`);
    });
}
