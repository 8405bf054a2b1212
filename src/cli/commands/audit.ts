/** `keyhold audit ...` commands: enable, disable and list audit devices (like `vault audit`). */
import type { Command } from 'commander';
import { LocalError } from '../client.js';
import type { CliContext } from '../context.js';
import { grid } from '../output.js';

/** Register the audit commands. */
export function register(program: Command, ctx: CliContext): void {
  const audit = program.command('audit').description('Audit devices: a JSON-lines log of every request, with sensitive values hashed');

  audit
    .command('enable')
    .description('Enable an audit device')
    .argument('<type>', 'device type: file')
    .argument('[options...]', 'device options as key=value: path=FILE (or file_path=FILE), mode=0600, hmac_accessor=true, elide_list_responses=false, prefix=TEXT')
    .option('--path <path>', 'where to enable the device (default: the type name)')
    .option('--description <text>', 'human description', '')
    .option('--local', 'accepted for compatibility')
    .addHelpText('after', '\nExamples:\n  $ keyhold audit enable file path=/var/log/keyhold-audit.log\n  $ keyhold audit enable --path=backup file file_path=/mnt/logs/keyhold.log mode=0640')
    .action(async (type: string, pairs: string[], opts: { path?: string; description: string; local?: boolean }, cmd: Command) => {
      const raw = await ctx.parsePairs(pairs);
      const options: Record<string, string> = {};
      for (const [k, v] of Object.entries(raw)) {
        if (typeof v === 'object' && v !== null) throw new LocalError(`option ${k}: expected a plain value`);
        options[k === 'path' ? 'file_path' : k] = String(v);
      }
      const where = (opts.path ?? type).replace(/^\/+|\/+$/g, '');
      if (!where) throw new LocalError('--path must not be empty');
      await ctx.client(cmd).write(`sys/audit/${where}`, { type, description: opts.description, options, local: Boolean(opts.local) });
      process.stderr.write(`Success! Enabled the ${type} audit device at: ${where}/\n`);
    });

  audit
    .command('disable')
    .description('Disable an audit device (its log file is kept)')
    .argument('<path>', 'device path, e.g. file')
    .action(async (path: string, _o, cmd: Command) => {
      const where = path.replace(/^\/+|\/+$/g, '');
      if (!where) throw new LocalError('path must not be empty');
      await ctx.client(cmd).delete(`sys/audit/${where}`);
      process.stderr.write(`Success! Disabled audit device (if it was enabled) at: ${where}/\n`);
    });

  audit
    .command('list')
    .description('List enabled audit devices')
    .option('--detailed', 'also show options')
    .action(async (opts: { detailed?: boolean }, cmd: Command) => {
      const res = await ctx.client(cmd).read('sys/audit');
      const data = (res.body?.data ?? {}) as Record<string, { type: string; description: string; options: Record<string, string> }>;
      const g = ctx.globals(cmd);
      if (g.field || (g.format && g.format !== 'table')) return ctx.print(cmd, data);
      const entries = Object.entries(data).sort(([a], [b]) => a.localeCompare(b));
      if (entries.length === 0) {
        process.stderr.write('No audit devices are enabled.\n');
        return;
      }
      const headers = opts.detailed ? ['Path', 'Type', 'Description', 'Options'] : ['Path', 'Type', 'Description'];
      const rows = entries.map(([p, d]) => {
        const row = [p, d.type, d.description ?? ''];
        if (opts.detailed) row.push(Object.entries(d.options ?? {}).map(([k, v]) => `${k}=${v}`).join(' '));
        return row;
      });
      process.stdout.write(grid(headers, rows));
    });
}
