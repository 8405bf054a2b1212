/**
 * `keyhold service install|uninstall|status`: run the daemon as a per-user service (systemd user
 * unit on Linux, launchd agent on macOS; texts in src/cli/service.ts). systemctl and launchctl are
 * run as child processes; their failures are reported with their own message.
 */
import { isSingleExecutable } from '../../native/embedded-addon.js';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { LocalError } from '../client.js';
import { success } from '../output.js';
import { defaultSocket } from '../../framework/paths.js';
import { LAUNCHD_LABEL, SYSTEMD_UNIT, managerOf, serviceFile, serviceText, type ServiceManager, type ServiceSpec } from '../service.js';

/** Output of one systemctl/launchctl call. */
interface Ran {
  ok: boolean;
  out: string;
  err: string;
}

function run(cmd: string, args: string[]): Ran {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000 });
  if (r.error) return { ok: false, out: '', err: (r.error as NodeJS.ErrnoException).code === 'ENOENT' ? `${cmd} not found` : r.error.message };
  return { ok: r.status === 0, out: (r.stdout ?? '').trim(), err: (r.stderr ?? '').trim() };
}

function firstLine(r: Ran): string {
  return (r.err || r.out).split('\n')[0] ?? '';
}

function manager(): ServiceManager {
  const m = managerOf(process.platform);
  if (!m) throw new LocalError(`keyhold service supports Linux (systemd) and macOS (launchd), not ${process.platform}`);
  return m;
}

function uid(): number {
  return process.getuid?.() ?? 0;
}

/** Write `text` to `file` through a temporary file and a rename (never half a unit). */
function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o644 });
  renameSync(tmp, file);
}

/** The Unix socket a config file sets, when it names one (a JSON config; see docs/server.md). */
function configSocket(config: string): string | undefined {
  try {
    const c = JSON.parse(readFileSync(config, 'utf8')) as { listeners?: { type?: string; path?: string }[] };
    return c.listeners?.find((l) => l.type === 'unix' && typeof l.path === 'string')?.path;
  } catch {
    return undefined; // the daemon reports a bad config file itself, naming the key
  }
}

/** Register `keyhold service`. */
export function register(program: Command, ctx: CliContext): void {
  const service = program.command('service').description('Run the daemon as a user service (systemd on Linux, launchd on macOS)');

  service
    .command('install')
    .description('Write the user service for `keyhold server`, enable it at login and start it (restarted on failure)')
    .option('--config <file>', 'config file for the daemon (see `keyhold server --config`)')
    .option('--no-start', 'only write the unit or plist; do not enable or start it')
    .addHelpText('after', '\nExamples:\n  $ keyhold service install\n  $ keyhold service install --config ~/.config/keyhold/server.json')
    .action((opts: { config?: string; start: boolean }) => {
      const m = manager();
      let config: string | undefined;
      if (opts.config) {
        config = resolve(opts.config);
        if (!existsSync(config) || !statSync(config).isFile()) throw new LocalError(`--config: ${config} is not a file`);
      }
      const env: Record<string, string> = {};
      if (process.env.KEYHOLD_HOME) env.KEYHOLD_HOME = resolve(process.env.KEYHOLD_HOME);
      // The installed shim itself (npm's bin link resolved), run by this very node binary; the
      // single executable runs itself.
      const script = isSingleExecutable() ? {} : { script: realpathSync(process.argv[1]!) };
      const spec: ServiceSpec = { node: process.execPath, ...script, ...(config ? { config } : {}), env };
      const file = serviceFile(m);
      writeAtomically(file, serviceText(m, spec));
      if (opts.start) {
        const steps: [string, string[]][] =
          m === 'systemd'
            ? [
                ['systemctl', ['--user', 'daemon-reload']],
                ['systemctl', ['--user', 'enable', '--now', SYSTEMD_UNIT]],
              ]
            : [['launchctl', ['bootstrap', `gui/${uid()}`, file]]];
        // A reinstall replaces a loaded agent: launchd refuses to bootstrap a label twice.
        if (m === 'launchd') run('launchctl', ['bootout', `gui/${uid()}/${LAUNCHD_LABEL}`]);
        for (const [cmd, args] of steps) {
          const r = run(cmd, args);
          if (!r.ok) throw new LocalError(`${cmd} ${args.join(' ')} failed: ${firstLine(r)} (the ${m === 'systemd' ? 'unit' : 'plist'} is written at ${file})`);
        }
      }
      const socket = (config && configSocket(config)) || defaultSocket({ ...process.env, ...env });
      success(`Success! ${m === 'systemd' ? SYSTEMD_UNIT : LAUNCHD_LABEL} written to ${file}${opts.start ? ', enabled and started' : ' (not started: --no-start)'}`);
      process.stderr.write(`The daemon listens on unix://${socket}${socket === defaultSocket() ? ', where the CLI looks by default' : `: set KEYHOLD_ADDR=unix://${socket} for the CLI`}.\n`);
    });

  service
    .command('uninstall')
    .description('Stop and disable the user service and remove its unit or plist')
    .addHelpText('after', '\nExamples:\n  $ keyhold service uninstall')
    .action(() => {
      const m = manager();
      const file = serviceFile(m);
      if (m === 'systemd') {
        const r = run('systemctl', ['--user', 'disable', '--now', SYSTEMD_UNIT]);
        if (!r.ok && existsSync(file)) process.stderr.write(`warning: systemctl --user disable --now ${SYSTEMD_UNIT}: ${firstLine(r)}\n`);
      } else run('launchctl', ['bootout', `gui/${uid()}/${LAUNCHD_LABEL}`]);
      const had = existsSync(file);
      rmSync(file, { force: true });
      if (m === 'systemd') run('systemctl', ['--user', 'daemon-reload']);
      success(had ? `Success! Removed ${file}` : `Success! Nothing to remove: ${file} does not exist`);
    });

  service
    .command('status')
    .description('Whether the user service is installed, enabled and running, and whether the daemon answers (exit 1 when not installed)')
    .addHelpText('after', '\nExamples:\n  $ keyhold service status\n  $ keyhold service status --format json')
    .action(async (_o, cmd: Command) => {
      const m = manager();
      const file = serviceFile(m);
      const installed = existsSync(file);
      const state = (r: Ran) => r.out.split('\n')[0] || `unknown (${firstLine(r)})`;
      let enabled: string;
      let active: string;
      if (m === 'systemd') {
        enabled = state(run('systemctl', ['--user', 'is-enabled', SYSTEMD_UNIT]));
        active = state(run('systemctl', ['--user', 'is-active', SYSTEMD_UNIT]));
      } else {
        const r = run('launchctl', ['print', `gui/${uid()}/${LAUNCHD_LABEL}`]);
        enabled = r.ok ? 'loaded' : 'not loaded';
        active = /state = running/.test(r.out) ? 'active' : r.ok ? 'inactive' : 'unknown';
      }
      const socket = defaultSocket();
      let daemon = 'not answering';
      try {
        const { rawRequest } = await import('../raw-request.js');
        const s = (await rawRequest('GET', `unix://${socket}`, 'sys/seal-status', undefined)) ?? {};
        daemon = `answering (sealed: ${String(s.sealed)}, version ${String(s.version)})`;
      } catch {
        // Not running, or not on the default socket: said in the table.
      }
      await ctx.print(cmd, { manager: m, file, installed, enabled, active, socket: `unix://${socket}`, daemon });
      if (!installed) process.exitCode = 1;
    });
}
